// go-mysql's replication.BinlogSyncer against binlogd, as Go CDC tools
// (gh-ost, canal-go, data-migration tools) use it: from a file position
// and from a GTID set, the rows it decodes equal the workload's, and a
// sync started again from the position saved before a restart of binlogd
// gets exactly the transactions committed after it. Run: `go run .
// PATH/TO/binlogd`; prints `N passed, M failed`. `consume` (consume.go)
// is the consumer `binlogd bench cdc` runs.
package main

import (
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"time"

	"github.com/go-mysql-org/go-mysql/client"
	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"
)

type checks struct{ passed, failed int }

func (c *checks) check(name string, ok bool, detail string) {
	if ok {
		c.passed++
		fmt.Println("ok   " + name)
	} else {
		c.failed++
		fmt.Println("FAIL " + name + ": " + detail)
	}
}

func (c *checks) equal(name string, want, got any) {
	c.check(name, reflect.DeepEqual(want, got), fmt.Sprintf("\n     expected %v\n     got      %v", want, got))
}

// server is a `binlogd serve` process on a fixed 127.0.0.1 port with its
// own data directory, stopped by PID.
type server struct {
	binary, dir string
	port        int
	cmd         *exec.Cmd
	ready       int
}

func startServer(binary string) *server {
	dir, err := os.MkdirTemp("", "binlogd-go-mysql")
	must(err)
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	must(err)
	port := listener.Addr().(*net.TCPAddr).Port
	listener.Close()
	s := &server{binary: binary, dir: dir, port: port}
	s.start()
	return s
}

func (s *server) start() {
	logPath := filepath.Join(s.dir, "server.log")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	must(err)
	defer logFile.Close()
	s.cmd = exec.Command(s.binary, "serve", "--datadir", filepath.Join(s.dir, "data"), "--port", fmt.Sprint(s.port), "--bind=127.0.0.1")
	s.cmd.Stderr = logFile
	must(s.cmd.Start())
	deadline := time.Now().Add(60 * time.Second)
	for {
		text, _ := os.ReadFile(logPath)
		if n := strings.Count(string(text), "ready for connections"); n > s.ready {
			s.ready = n
			return
		}
		if time.Now().After(deadline) {
			panic("binlogd did not get ready: " + string(text))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stop sends SIGTERM, as an operator's restart does.
func (s *server) stop() {
	must(s.cmd.Process.Signal(os.Interrupt))
	s.cmd.Wait()
}

func (s *server) close() {
	if s.cmd.ProcessState == nil {
		s.cmd.Process.Signal(os.Interrupt)
		s.cmd.Wait()
	}
	os.RemoveAll(s.dir)
}

func (s *server) conn() *client.Conn {
	conn, err := client.Connect(fmt.Sprintf("127.0.0.1:%d", s.port), "root", "", "")
	must(err)
	return conn
}

func (s *server) exec(statements ...string) {
	conn := s.conn()
	defer conn.Close()
	for _, sql := range statements {
		_, err := conn.Execute(sql)
		if err != nil {
			panic(fmt.Sprintf("%s: %v", sql, err))
		}
	}
}

// status is SHOW BINARY LOG STATUS: the position after the last commit
// and the executed GTID set.
func (s *server) status() (mysql.Position, string) {
	conn := s.conn()
	defer conn.Close()
	result, err := conn.Execute("SHOW BINARY LOG STATUS")
	must(err)
	file, _ := result.GetString(0, 0)
	pos, _ := result.GetUint(0, 1)
	gtids, _ := result.GetString(0, 4)
	return mysql.Position{Name: file, Pos: uint32(pos)}, gtids
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}

// change is one decoded row change: the table, the kind of rows event and
// the row images, each value as text (canonical below).
type change struct {
	Table string
	Kind  string
	Rows  [][]string
}

// canonical renders a decoded value as the harness compares it: bytes as
// hex, everything else as fmt prints it (decimals, times as text).
func canonical(value any) string {
	switch v := value.(type) {
	case nil:
		return "NULL"
	case []byte:
		return "0x" + hex.EncodeToString(v)
	default:
		return fmt.Sprint(v)
	}
}

func syncerConfig(s *server, id uint32) replication.BinlogSyncerConfig {
	return replication.BinlogSyncerConfig{
		ServerID:   id,
		Flavor:     mysql.MySQLFlavor,
		Host:       "127.0.0.1",
		Port:       uint16(s.port),
		User:       "root",
		UseDecimal: true,
		Logger:     slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
}

// read collects row changes from the streamer until `want` of them arrived
// (or the time is up), with the GTIDs of their transactions and the
// position after the last event read.
func read(streamer *replication.BinlogStreamer, want int, seconds int) ([]change, []string, mysql.Position) {
	var changes []change
	var gtids []string
	var position mysql.Position
	deadline := time.Now().Add(time.Duration(seconds) * time.Second)
	for len(changes) < want && time.Now().Before(deadline) {
		ctx, cancel := context.WithDeadline(context.Background(), deadline)
		event, err := streamer.GetEvent(ctx)
		cancel()
		if err != nil {
			break
		}
		switch e := event.Event.(type) {
		case *replication.RotateEvent:
			position = mysql.Position{Name: string(e.NextLogName), Pos: uint32(e.Position)}
		case *replication.GTIDEvent:
			next, err := e.GTIDNext()
			must(err)
			gtids = append(gtids, next.String())
		case *replication.RowsEvent:
			kind := map[replication.EventType]string{
				replication.WRITE_ROWS_EVENTv2: "insert", replication.UPDATE_ROWS_EVENTv2: "update", replication.DELETE_ROWS_EVENTv2: "delete",
			}[event.Header.EventType]
			c := change{Table: string(e.Table.Schema) + "." + string(e.Table.Table), Kind: kind}
			// go-mysql decodes integers as signed and leaves signedness to
			// the Table_map's optional metadata, as its users (canal) do.
			unsigned := e.Table.UnsignedMap()
			for _, row := range e.Rows {
				text := make([]string, len(row))
				for i, value := range row {
					if v, ok := value.(int64); ok && unsigned[i] {
						value = uint64(v)
					}
					text[i] = canonical(value)
				}
				c.Rows = append(c.Rows, text)
			}
			changes = append(changes, c)
		}
		if event.Header.LogPos != 0 {
			position.Pos = event.Header.LogPos
		}
	}
	return changes, gtids, position
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "consume" {
		consumeMain(os.Args[2:])
		return
	}
	c := &checks{}
	start := time.Now()
	func() {
		defer func() {
			if r := recover(); r != nil {
				c.check("the harness ran to its end", false, fmt.Sprint(r))
			}
		}()
		run(os.Args[1], c)
	}()
	fmt.Printf("go-mysql harness: %.1f s\n", time.Since(start).Seconds())
	fmt.Printf("%d passed, %d failed\n", c.passed, c.failed)
	if c.failed > 0 || c.passed == 0 {
		os.Exit(1)
	}
}

func row(values ...string) []string { return values }

func run(binary string, c *checks) {
	s := startServer(binary)
	defer s.close()
	s.exec("CREATE DATABASE gm",
		"CREATE TABLE gm.t (id INT NOT NULL PRIMARY KEY, name VARCHAR(20), amount DECIMAL(10,2), born DATETIME(3), data BLOB, big BIGINT UNSIGNED, e ENUM('a','b'))")
	fromPosition, before := s.status()

	s.exec("INSERT INTO gm.t VALUES (1, 'one', 1.50, '2024-01-02 03:04:05.678', X'00ff', 18446744073709551615, 'b'), (2, NULL, NULL, NULL, NULL, NULL, NULL)",
		"BEGIN", "UPDATE gm.t SET name = 'uno', amount = amount * 2 WHERE id = 1", "DELETE FROM gm.t WHERE id = 2", "COMMIT",
		"FLUSH BINARY LOGS",
		"INSERT INTO gm.t (id, name) VALUES (3, 'after rotation')")
	one := row("1", "one", "1.5", "2024-01-02 03:04:05.678", "0x00ff", "18446744073709551615", "2")
	uno := row("1", "uno", "3", "2024-01-02 03:04:05.678", "0x00ff", "18446744073709551615", "2")
	two := row("2", "NULL", "NULL", "NULL", "NULL", "NULL", "NULL")
	three := row("3", "after rotation", "NULL", "NULL", "NULL", "NULL", "NULL")
	want := []change{
		{"gm.t", "insert", [][]string{one, two}},
		{"gm.t", "update", [][]string{one, uno}},
		{"gm.t", "delete", [][]string{two}},
		{"gm.t", "insert", [][]string{three}},
	}
	_, after := s.status()

	// From a file position.
	syncer := replication.NewBinlogSyncer(syncerConfig(s, 7001))
	streamer, err := syncer.StartSync(fromPosition)
	must(err)
	got, gtids, _ := read(streamer, len(want), 60)
	syncer.Close()
	c.equal("BinlogSyncer from a file position: the rows decoded", want, got)
	c.equal("BinlogSyncer from a file position: one GTID per transaction", 3, len(gtids))

	// From a GTID set: everything executed before the workload.
	set, err := mysql.ParseMysqlGTIDSet(before)
	must(err)
	syncer = replication.NewBinlogSyncer(syncerConfig(s, 7002))
	streamer, err = syncer.StartSyncGTID(set)
	must(err)
	got, gtids, saved := read(streamer, len(want), 60)
	syncer.Close()
	c.equal("BinlogSyncer from a GTID set: the rows decoded", want, got)
	executed, err := mysql.ParseMysqlGTIDSet(before)
	must(err)
	for _, gtid := range gtids {
		must(executed.Update(gtid))
	}
	final, err := mysql.ParseMysqlGTIDSet(after)
	must(err)
	c.check("BinlogSyncer from a GTID set: the GTIDs read complete the executed set", executed.Equal(final),
		fmt.Sprintf("%v + %v != %v", before, gtids, after))

	// A restart of binlogd: a sync from the saved position gets exactly the
	// transactions committed after it.
	s.stop()
	s.start()
	s.exec("INSERT INTO gm.t (id, name) VALUES (4, 'after restart')", "UPDATE gm.t SET e = 'a' WHERE id = 1")
	uno2 := row("1", "uno", "3", "2024-01-02 03:04:05.678", "0x00ff", "18446744073709551615", "1")
	syncer = replication.NewBinlogSyncer(syncerConfig(s, 7003))
	streamer, err = syncer.StartSync(saved)
	must(err)
	got, _, _ = read(streamer, 2, 60)
	// Anything more would be a duplicate.
	more, _, _ := read(streamer, 1, 2)
	syncer.Close()
	c.equal("a sync resumed from the saved position after a restart: the new rows once", []change{
		{"gm.t", "insert", [][]string{row("4", "after restart", "NULL", "NULL", "NULL", "NULL", "NULL")}},
		{"gm.t", "update", [][]string{uno, uno2}},
	}, append(got, more...))

	runCanal(s, c)
}
