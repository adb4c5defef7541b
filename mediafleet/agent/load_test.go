package agent

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/livekit/protocol/livekit"
	"google.golang.org/protobuf/proto"
)

// statusPipe connects w to a websocket whose far end hands back each UpdateWorkerStatus
// the worker writes, as livekit-server reads it.
func statusPipe(t *testing.T, w *Worker) <-chan *livekit.UpdateWorkerStatus {
	t.Helper()
	got := make(chan *livekit.UpdateWorkerStatus, 16)
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		c, err := (&websocket.Upgrader{}).Upgrade(rw, r, nil)
		if err != nil {
			return
		}
		defer c.Close()
		for {
			_, data, err := c.ReadMessage()
			if err != nil {
				return
			}
			m := &livekit.WorkerMessage{}
			if err := proto.Unmarshal(data, m); err != nil {
				t.Errorf("worker message: %v", err)
				return
			}
			if u := m.GetUpdateWorker(); u != nil {
				got <- u
			}
		}
	}))
	t.Cleanup(srv.Close)
	conn, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(srv.URL, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	w.mu.Lock()
	w.conn = conn
	w.mu.Unlock()
	return got
}

func nextStatus(t *testing.T, ch <-chan *livekit.UpdateWorkerStatus) *livekit.UpdateWorkerStatus {
	t.Helper()
	select {
	case u := <-ch:
		return u
	case <-time.After(5 * time.Second):
		t.Fatal("no UpdateWorkerStatus")
		return nil
	}
}

// TestStatusCarriesTheLoad checks the load LiveKit's dispatcher weighs workers by (it
// picks among available workers at random, weighted by 1 - load): the share of job
// slots taken, or the measured CPU when that is higher.
func TestStatusCarriesTheLoad(t *testing.T) {
	var cpu atomic.Value
	cpu.Store(0.0)
	var reported []float64
	w, err := New(Config{URL: "ws://127.0.0.1:1", Token: SelfSigned("k", "s"), AgentName: "a", MaxJobs: 4,
		CPULoad: func() float64 { return cpu.Load().(float64) },
		OnLoad:  func(load float64, _ int) { reported = append(reported, load) },
	}, func(context.Context, Job) error { return nil }, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	status := statusPipe(t, w)
	check := func(what string, wantLoad float32, wantJobs uint32, wantStatus livekit.WorkerStatus) {
		t.Helper()
		w.sendStatus()
		u := nextStatus(t, status)
		if d := u.GetLoad() - wantLoad; d > 0.001 || d < -0.001 || u.GetJobCount() != wantJobs || u.GetStatus() != wantStatus {
			t.Errorf("%s: status load %.3f, jobs %d, %v; want %.3f, %d, %v", what, u.GetLoad(), u.GetJobCount(), u.GetStatus(), wantLoad, wantJobs, wantStatus)
		}
		if got := reported[len(reported)-1]; float32(got) != u.GetLoad() {
			t.Errorf("%s: OnLoad saw %.3f, the status carried %.3f", what, got, u.GetLoad())
		}
	}
	check("idle", 0, 0, livekit.WorkerStatus_WS_AVAILABLE)

	w.mu.Lock()
	w.running["job-1"] = func(error) {}
	w.reserved["job-2"] = time.Now()
	w.mu.Unlock()
	check("one running, one offered: 2 of 4 slots", 0.5, 1, livekit.WorkerStatus_WS_AVAILABLE)

	cpu.Store(0.8)
	check("CPU at 80%, above the slots' 50%", 0.8, 1, livekit.WorkerStatus_WS_AVAILABLE)
	if got := w.Load(); got != 0.8 {
		t.Errorf("Load() = %v, want 0.8", got)
	}

	cpu.Store(0.1)
	w.mu.Lock()
	w.running["job-2"] = func(error) {}
	w.running["job-3"] = func(error) {}
	w.running["job-4"] = func(error) {}
	delete(w.reserved, "job-2")
	w.mu.Unlock()
	check("every slot taken, CPU low", 1, 4, livekit.WorkerStatus_WS_FULL)

	// The CPU alone never makes the load 1: LiveKit would drop the job rather than offer
	// it to a worker with free slots.
	cpu.Store(1.0)
	w.mu.Lock()
	delete(w.running, "job-4")
	w.mu.Unlock()
	check("CPU saturated, a slot free", 0.9, 3, livekit.WorkerStatus_WS_AVAILABLE)
}

func TestParseStatCPU(t *testing.T) {
	// A command name with spaces and a parenthesis; utime 1234, stime 56 ticks.
	stat := "4242 (persona (worker) x) S 1 4242 4242 0 -1 4194560 2000 0 0 0 1234 56 0 0 20 0 12 0 100 1000000 5000"
	got, err := parseStatCPU(stat)
	if err != nil || got != 12900*time.Millisecond {
		t.Errorf("parseStatCPU = %v, %v; want 12.9s", got, err)
	}
	if _, err := parseStatCPU("garbage"); err == nil {
		t.Error("parseStatCPU(garbage): want an error")
	}
}

// TestProcessCPUMeasuresThisProcess burns CPU for over a second and expects the meter to
// read what the process used (however much of a loaded machine it got).
func TestProcessCPUMeasuresThisProcess(t *testing.T) {
	meter := ProcessCPU()
	start := time.Now()
	cpu0, err := processCPUTime()
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	if got := meter(); got != 0 {
		t.Errorf("first reading %v, want 0 (nothing measured yet)", got)
	}
	x := 0
	for {
		x++
		if x%1000 != 0 {
			continue
		}
		used, _ := processCPUTime()
		if d := time.Since(start); d > 1100*time.Millisecond && (used-cpu0 >= 200*time.Millisecond || d > 10*time.Second) {
			break
		}
	}
	got := meter()
	cpu1, _ := processCPUTime()
	want := float64(cpu1-cpu0) / float64(time.Since(start)) / float64(runtime.GOMAXPROCS(0))
	if got <= 0 || got > 1 || got < want*0.7-0.02 || got > want*1.3+0.02 {
		t.Errorf("CPU load %.3f after a busy loop (%d turns), want about %.3f (this process's CPU over the time, per CPU)", got, x, want)
	}
	if again := meter(); again != got {
		t.Errorf("a reading within the second answered %v, want the last figure %v", again, got)
	}
}
