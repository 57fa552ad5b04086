// go-mysql's canal against binlogd, as canal-go and data-migration tools
// run it: a dump of the existing rows through the mysqldump program
// (`--single-transaction --master-data`, the coordinates read from its
// CHANGE MASTER line), then the binlog streamed from those coordinates,
// then a canal started again from the position it last synced.
package main

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"sync"
	"time"

	"github.com/go-mysql-org/go-mysql/canal"
	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"
)

// canalHandler collects the row changes canal hands over and the last
// position it synced.
type canalHandler struct {
	canal.DummyEventHandler
	mu      sync.Mutex
	changes []change
	synced  mysql.Position
}

func (h *canalHandler) OnRow(e *canal.RowsEvent) error {
	c := change{Table: e.Table.Schema + "." + e.Table.Name, Kind: e.Action}
	for _, values := range e.Rows {
		text := make([]string, len(values))
		for i, value := range values {
			text[i] = canonical(value)
		}
		c.Rows = append(c.Rows, text)
	}
	h.mu.Lock()
	h.changes = append(h.changes, c)
	h.mu.Unlock()
	return nil
}

func (h *canalHandler) OnPosSynced(_ *replication.EventHeader, pos mysql.Position, _ mysql.GTIDSet, _ bool) error {
	h.mu.Lock()
	h.synced = pos
	h.mu.Unlock()
	return nil
}

func (h *canalHandler) String() string { return "binlogd harness" }

// wait returns the changes once `want` of them arrived, or what arrived
// when the time is up.
func (h *canalHandler) wait(want int, seconds int) []change {
	deadline := time.Now().Add(time.Duration(seconds) * time.Second)
	for {
		h.mu.Lock()
		n := len(h.changes)
		h.mu.Unlock()
		if n >= want || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]change(nil), h.changes...)
}

func (h *canalHandler) position() mysql.Position {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.synced
}

// dumpProgram is the mysqldump canal runs: MySQL's, or MariaDB's under
// either name (Debian's mariadb-client installs both).
func dumpProgram() string {
	for _, name := range []string{"mysqldump", "mariadb-dump"} {
		if path, err := exec.LookPath(name); err == nil {
			return path
		}
	}
	panic("neither mysqldump nor mariadb-dump is installed")
}

func canalConfig(s *server, id uint32, dump bool) *canal.Config {
	cfg := canal.NewDefaultConfig()
	cfg.Addr = fmt.Sprintf("127.0.0.1:%d", s.port)
	cfg.User = "root"
	cfg.Password = ""
	cfg.ServerID = id
	cfg.Flavor = mysql.MySQLFlavor
	cfg.UseDecimal = true
	cfg.IncludeTableRegex = []string{`cn\.t`}
	// HARNESS_LOG=1 shows canal's own log (its dump and sync steps).
	var log io.Writer = io.Discard
	if os.Getenv("HARNESS_LOG") != "" {
		log = os.Stderr
	}
	cfg.Logger = slog.New(slog.NewTextHandler(log, nil))
	if dump {
		cfg.Dump.ExecutionPath = dumpProgram()
		cfg.Dump.TableDB = "cn"
		cfg.Dump.Tables = []string{"t"}
		cfg.Dump.DiscardErr = false
	} else {
		cfg.Dump.ExecutionPath = ""
	}
	return cfg
}

func runCanal(s *server, c *checks) {
	s.exec("CREATE DATABASE cn",
		"CREATE TABLE cn.t (id INT NOT NULL PRIMARY KEY, name VARCHAR(20), amount DECIMAL(10,2), big BIGINT UNSIGNED)",
		"CREATE TABLE cn.other (id INT PRIMARY KEY)",
		"INSERT INTO cn.t VALUES (1, 'one', 1.50, 18446744073709551615), (2, NULL, NULL, NULL)",
		"INSERT INTO cn.other VALUES (1)")

	// Dump, then stream: the dump's rows arrive as inserts, then the
	// changes committed after canal started, each once.
	handler := &canalHandler{}
	cn, err := canal.NewCanal(canalConfig(s, 7101, true))
	must(err)
	cn.SetEventHandler(handler)
	done := make(chan error, 1)
	go func() { done <- cn.Run() }()
	select {
	case <-cn.WaitDumpDone():
	case err := <-done:
		panic(fmt.Sprintf("canal stopped during its dump: %v", err))
	case <-time.After(60 * time.Second):
		panic("canal's dump did not finish in 60 s")
	}
	s.exec("INSERT INTO cn.t VALUES (3, 'three', 3.25, 3)",
		"INSERT INTO cn.other VALUES (2)",
		"BEGIN", "UPDATE cn.t SET name = 'uno' WHERE id = 1", "DELETE FROM cn.t WHERE id = 2", "COMMIT")
	one := row("1", "one", "1.5", "18446744073709551615")
	uno := row("1", "uno", "1.5", "18446744073709551615")
	two := row("2", "NULL", "NULL", "NULL")
	three := row("3", "three", "3.25", "3")
	want := []change{
		{"cn.t", "insert", [][]string{one}},
		{"cn.t", "insert", [][]string{two}},
		{"cn.t", "insert", [][]string{three}},
		{"cn.t", "update", [][]string{one, uno}},
		{"cn.t", "delete", [][]string{two}},
	}
	got := handler.wait(len(want), 60)
	c.equal("canal dump-then-stream: the dumped rows, then the streamed changes, each once", want, got)
	// Give canal the moment to sync the position of the last commit.
	deadline := time.Now().Add(10 * time.Second)
	end, _ := s.status()
	for handler.position().Compare(end) < 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	saved := handler.position()
	c.equal("canal dump-then-stream: the synced position reaches the last commit", end, saved)
	cn.Close()
	<-done

	// A restart of binlogd while canal is away; a canal started from the
	// saved position gets exactly what was committed after it.
	s.stop()
	s.start()
	s.exec("INSERT INTO cn.t VALUES (4, 'four', NULL, NULL)", "UPDATE cn.t SET big = 5 WHERE id = 3")
	handler = &canalHandler{}
	cn, err = canal.NewCanal(canalConfig(s, 7102, false))
	must(err)
	cn.SetEventHandler(handler)
	go func() { done <- cn.RunFrom(saved) }()
	got = handler.wait(2, 60)
	// Anything more would be a duplicate.
	time.Sleep(time.Second)
	got = handler.wait(3, 0)
	cn.Close()
	<-done
	c.equal("canal resumed from its synced position after a restart: the new changes once", []change{
		{"cn.t", "insert", [][]string{row("4", "four", "NULL", "NULL")}},
		{"cn.t", "update", [][]string{three, row("3", "three", "3.25", "5")}},
	}, got)
}
