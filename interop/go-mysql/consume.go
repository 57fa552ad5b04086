// The consumer half of `binlogd bench cdc` with go-mysql's BinlogSyncer:
// it streams from a running server (binlogd, or MariaDB with the MariaDB
// flavor) from its current position while the benchmark drives sysbench.
// Lag is measured with probes: every 10 ms a separate connection inserts
// a row carrying its wall-clock time (µs) into `cdcprobe.probe`, and the
// consumer takes the time the row event arrives (one machine, one clock).
// Row changes of every table are counted per second.
//
// Protocol with the benchmark, one line each on stdout: `READY` once the
// first probe arrived; after `seconds` of measurement and the drain
// (a probe sent after the window received), `SECOND i changes probes
// lag_p99_us` per second and `RESULT events=N seconds=S probes_sent=Q
// probes=P lag_p50_us=A lag_p99_us=B lag_max_us=C drain_ms=D` (events
// are row changes, as Debezium emits one event per row).
//
// Run: `harness consume PORT SECONDS mysql|mariadb`.
package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-mysql-org/go-mysql/client"
	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"
)

const probeInterval = 10 * time.Millisecond

type lagSample struct {
	second int
	lagUs  int64
}

type consumer struct {
	measureStart atomic.Int64 // unix ns; 0 until READY; probes sent before it are not measured
	firstProbe   atomic.Bool
	lastProbeUs  atomic.Int64
	perSecond    []atomic.Int64
	mu           sync.Mutex
	lags         []lagSample
}

func nowMicros() int64 { return time.Now().UnixMicro() }

func consumeMain(args []string) {
	if len(args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: harness consume PORT SECONDS mysql|mariadb")
		os.Exit(2)
	}
	port, err := strconv.Atoi(args[0])
	must(err)
	seconds, err := strconv.Atoi(args[1])
	must(err)
	if err := consume(port, seconds, args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "consume:", err)
		os.Exit(1)
	}
}

func consume(port, seconds int, flavor string) error {
	address := fmt.Sprintf("127.0.0.1:%d", port)
	conn, err := client.Connect(address, "root", "", "")
	if err != nil {
		return err
	}
	defer conn.Close()
	for _, sql := range []string{
		"CREATE DATABASE IF NOT EXISTS cdcprobe",
		"CREATE TABLE IF NOT EXISTS cdcprobe.probe (id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY, sent_us BIGINT NOT NULL)",
	} {
		if _, err := conn.Execute(sql); err != nil {
			return fmt.Errorf("%s: %w", sql, err)
		}
	}
	status, err := conn.Execute("SHOW MASTER STATUS")
	if err != nil {
		return err
	}
	file, _ := status.GetString(0, 0)
	pos, _ := status.GetUint(0, 1)

	syncer := replication.NewBinlogSyncer(replication.BinlogSyncerConfig{
		ServerID: 7201, Flavor: flavor, Host: "127.0.0.1", Port: uint16(port), User: "root",
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	defer syncer.Close()
	streamer, err := syncer.StartSync(mysql.Position{Name: file, Pos: uint32(pos)})
	if err != nil {
		return err
	}
	c := &consumer{perSecond: make([]atomic.Int64, seconds+1)}
	failed := make(chan error, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { failed <- c.read(ctx, streamer) }()

	probes, err := client.Connect(address, "root", "", "")
	if err != nil {
		return err
	}
	defer probes.Close()
	insert, err := probes.Prepare("INSERT INTO cdcprobe.probe (sent_us) VALUES (?)")
	if err != nil {
		return err
	}
	probe := func(sentUs int64) error {
		select {
		case err := <-failed:
			return fmt.Errorf("the binlog stream ended: %v", err)
		default:
		}
		_, err := insert.Execute(sentUs)
		return err
	}
	deadline := time.Now().Add(5 * time.Minute)
	for !c.firstProbe.Load() {
		if time.Now().After(deadline) {
			return fmt.Errorf("no probe arrived within 5 minutes")
		}
		if err := probe(nowMicros()); err != nil {
			return err
		}
		time.Sleep(probeInterval)
	}
	fmt.Println("READY")
	start := time.Now()
	c.measureStart.Store(start.UnixNano())
	sent := 0
	for time.Since(start) < time.Duration(seconds)*time.Second {
		if err := probe(nowMicros()); err != nil {
			return err
		}
		sent++
		time.Sleep(probeInterval)
	}
	endUs := nowMicros()
	drainStart := time.Now()
	if err := probe(endUs); err != nil {
		return err
	}
	for c.lastProbeUs.Load() < endUs {
		if time.Since(drainStart) > 10*time.Minute {
			return fmt.Errorf("the stream did not catch up within 10 minutes of the run's end")
		}
		select {
		case err := <-failed:
			return fmt.Errorf("the binlog stream ended: %v", err)
		case <-time.After(5 * time.Millisecond):
		}
	}
	c.report(seconds, sent, time.Since(drainStart))
	return nil
}

func (c *consumer) read(ctx context.Context, streamer *replication.BinlogStreamer) error {
	for {
		event, err := streamer.GetEvent(ctx)
		if err != nil {
			return err
		}
		rows, ok := event.Event.(*replication.RowsEvent)
		if !ok {
			continue
		}
		now := time.Now()
		second := -1
		if start := c.measureStart.Load(); start != 0 {
			second = int(now.Sub(time.Unix(0, start)) / time.Second)
		}
		changes := len(rows.Rows)
		switch event.Header.EventType {
		case replication.UPDATE_ROWS_EVENTv1, replication.UPDATE_ROWS_EVENTv2, replication.MARIADB_UPDATE_ROWS_COMPRESSED_EVENT_V1:
			changes /= 2
		}
		if second >= 0 && second < len(c.perSecond) {
			c.perSecond[second].Add(int64(changes))
		}
		if string(rows.Table.Schema) != "cdcprobe" || string(rows.Table.Table) != "probe" {
			continue
		}
		receivedUs := now.UnixMicro()
		for _, row := range rows.Rows {
			sentUs, ok := row[1].(int64)
			if !ok {
				return fmt.Errorf("probe row %v: sent_us is not an integer", row)
			}
			c.firstProbe.Store(true)
			if sentUs > c.lastProbeUs.Load() {
				c.lastProbeUs.Store(sentUs)
			}
			if start := c.measureStart.Load(); start != 0 && sentUs >= start/1000 {
				c.mu.Lock()
				c.lags = append(c.lags, lagSample{second, max(0, receivedUs-sentUs)})
				c.mu.Unlock()
			}
		}
	}
}

func percentile(sorted []int64, q float64) int64 {
	if len(sorted) == 0 {
		return 0
	}
	index := int(float64(len(sorted))*q+0.999999) - 1
	return sorted[min(len(sorted)-1, max(0, index))]
}

func (c *consumer) report(seconds, sent int, drain time.Duration) {
	c.mu.Lock()
	samples := append([]lagSample(nil), c.lags...)
	c.mu.Unlock()
	var events int64
	var all []int64
	for second := 0; second < seconds; second++ {
		count := c.perSecond[second].Load()
		events += count
		var lags []int64
		for _, sample := range samples {
			if sample.second == second {
				lags = append(lags, sample.lagUs)
			}
		}
		sort.Slice(lags, func(i, j int) bool { return lags[i] < lags[j] })
		all = append(all, lags...)
		fmt.Printf("SECOND %d %d %d %d\n", second, count, len(lags), percentile(lags, 0.99))
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	var worst int64
	if len(all) > 0 {
		worst = all[len(all)-1]
	}
	fmt.Printf("RESULT events=%d seconds=%d probes_sent=%d probes=%d lag_p50_us=%d lag_p99_us=%d lag_max_us=%d drain_ms=%d\n",
		events, seconds, sent, len(all), percentile(all, 0.50), percentile(all, 0.99), worst, drain.Milliseconds())
}
