package soak

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/livekit/protocol/livekit"
	lksdk "github.com/livekit/server-sdk-go/v2"

	"github.com/bridgeline/bridgeline/mediafleet/livekitserver/livekittest"
)

// Settings of one soak run.
type settings struct {
	Duration    time.Duration // how long the load runs
	MaxSessions int64         // the load stops after this many sessions, whichever comes first
	Clients     int           // concurrent clients
	Settle      time.Duration // idle time after the rooms are gone, before the last sample
	Media       string        // audio or video
	// Warmup is a load run before the start sample, followed by the same wait for the
	// rooms and the same Settle as the end: the start sample then holds what a
	// warmed-up livekit-server keeps, so the growth measured is the load's alone.
	Warmup time.Duration
}

// livekitGrowthGoal bounds livekit-server's resident growth after a warm-up, per
// lkGrowthPer sessions (issue 22: it grew 231 MB over 12,000 sessions before sessions
// hung their party up, waiting out its join, before deleting the room).
const (
	livekitGrowthGoal = 50e6
	lkGrowthPer       = 12000
)

// TestSoak is `make soak`: SOAK_DURATION (default 2m), SOAK_CLIENTS (8),
// SOAK_MAX_SESSIONS (200000), SOAK_SETTLE (30s), SOAK_MEDIA (audio), SOAK_WARMUP (none).
// It fails on any error answer and on any room livekit-server still lists after the
// load (a room kept by a deletion during a party's join). With SOAK_WARMUP and a
// SOAK_SETTLE of at least 8 minutes (past livekit-server's per-room webhook queues) it
// also fails when livekit-server's resident memory grew by livekitGrowthGoal or more per
// 12,000 sessions; bridgeline's figures are reported (TestSoakShort asserts them).
func TestSoak(t *testing.T) {
	if os.Getenv("SOAK") == "" {
		t.Skip("set SOAK=1 (make soak) to run the soak")
	}
	st := settings{Duration: 2 * time.Minute, MaxSessions: 200000, Clients: 8, Settle: 30 * time.Second, Media: "audio"}
	envDuration(t, "SOAK_DURATION", &st.Duration)
	envDuration(t, "SOAK_SETTLE", &st.Settle)
	envDuration(t, "SOAK_WARMUP", &st.Warmup)
	envInt(t, "SOAK_CLIENTS", &st.Clients)
	var max int
	envInt(t, "SOAK_MAX_SESSIONS", &max)
	if max > 0 {
		st.MaxSessions = int64(max)
	}
	if v := os.Getenv("SOAK_MEDIA"); v != "" {
		st.Media = v
	}
	r := runSoak(t, st)
	r.print(t)
	if r.errors > 0 {
		t.Errorf("%d error answers, want 0 (first: %s)", r.errors, r.firstError)
	}
	if r.roomsLeft > 0 {
		t.Errorf("livekit-server still lists %d rooms after the load, want 0", r.roomsLeft)
	}
	if st.Warmup > 0 && st.Settle >= 8*time.Minute && r.sessions > 0 {
		g := float64(r.idle.lkRSS-r.start.lkRSS) / float64(r.sessions) * lkGrowthPer
		t.Logf("soak: livekit-server RSS after the warm-up %.1f MB -> idle %.1f MB: %.1f MB per %d sessions (goal under %.0f)",
			mb(r.start.lkRSS), mb(r.idle.lkRSS), mb(int64(g)), lkGrowthPer, mb(livekitGrowthGoal))
		if g >= livekitGrowthGoal {
			t.Errorf("livekit-server grew %.1f MB per %d sessions after the warm-up, want under %.0f", mb(int64(g)), lkGrowthPer, mb(livekitGrowthGoal))
		}
	}
}

// TestSoakShort is the short variant: two rounds of 1,200 sessions by 4 clients, each
// followed by a wait until every room is gone. What bridgeline's heap keeps from the
// second round (past the sim's bound of ended calls it keeps, reached in the first) must
// stay under 1 MB per 1000 sessions; before the fix it kept 5 MB. livekit-server keeps
// each room's webhook queue for 5 to 7.5 minutes whatever we do (docs/reliability.md),
// so its figures are reported, not asserted here.
func TestSoakShort(t *testing.T) {
	if os.Getenv("SOAK") != "" {
		t.Skip("TestSoak runs instead")
	}
	if testing.Short() {
		t.Skip("runs the local stack")
	}
	st := settings{Duration: 2 * time.Minute, MaxSessions: 1200, Clients: 4, Media: "audio"}
	s := startStack(t)
	s.warm(st.Media)
	r := &report{st: st, lat: map[string][]time.Duration{}}
	s.load(t, st, r)
	left := s.quiesce(t, 15*time.Second, 5*time.Second)
	first := s.sample(t, r.loadTime, "", "")
	n := r.sessions
	s.load(t, st, r)
	left += s.quiesce(t, 15*time.Second, 5*time.Second)
	second := s.sample(t, r.loadTime, "", "")
	if left > 0 {
		t.Errorf("livekit-server still listed %d rooms after the rounds, want 0 (a deletion during a party's join)", left)
	}
	r.start, r.idle = first, second
	if r.errors > 0 {
		t.Errorf("%d error answers, want 0 (first: %s)", r.errors, r.firstError)
	}
	// The check below measures something only with both heaps read and a second round
	// of sessions to divide by: anything less fails rather than passes.
	for _, smp := range []sample{first, second} {
		if smp.heapErr != nil {
			t.Fatalf("bridgeline's heap could not be read: %v", smp.heapErr)
		}
	}
	if round2 := r.sessions - n; round2 < minSecondRound {
		t.Fatalf("the second round made %d sessions, want at least %d to measure what the heap keeps per 1000", round2, minSecondRound)
	}
	k := float64(r.sessions-n) / 1000
	t.Logf("soak: round 2 (%d sessions): bridgeline heap %.1f -> %.1f MB (%.2f MB per 1000 sessions), RSS %.1f -> %.1f MB; livekit-server RSS %.1f -> %.1f MB (%.2f MB per 1000)",
		r.sessions-n, mb(first.heap), mb(second.heap), mb(second.heap-first.heap)/k, mb(first.blRSS), mb(second.blRSS),
		mb(first.lkRSS), mb(second.lkRSS), mb(second.lkRSS-first.lkRSS)/k)
	if g := mb(second.heap-first.heap) / k; g > 1 {
		t.Errorf("bridgeline heap kept %.2f MB per 1000 sessions of the second round, want under 1", g)
	}
}

// minSecondRound is the fewest sessions TestSoakShort's second round may make for its
// heap check to mean anything (half its 1,200: a round the 2-minute bound cut short on a
// busy machine still counts).
const minSecondRound = 600

func envDuration(t *testing.T, name string, dst *time.Duration) {
	if v := os.Getenv(name); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		*dst = d
	}
}

func envInt(t *testing.T, name string, dst *int) {
	if v := os.Getenv(name); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		*dst = n
	}
}

// sample is both processes' memory at one moment.
type sample struct {
	at             time.Duration
	blRSS, lkRSS   int64 // resident bytes
	heap           int64 // bridgeline's live heap after a forced GC (pprof), 0 if unknown
	heapErr        error // why heap is unknown: no pprof endpoint, or its read failed
	lkHeap         int64 // livekit-server's, with SOAK_LIVEKIT_PPROF
	goroutines     int64 // bridgeline's goroutines (pprof), 0 if unknown
	rooms          int
	lkParticipants int
}

type report struct {
	st               settings
	sessions         int64
	errors           int64
	firstError       string
	lat              map[string][]time.Duration
	start, end, idle sample
	samples          []sample
	loadTime         time.Duration
	roomsLeft        int
	profileDir       string
}

func (r *report) print(t *testing.T) {
	t.Logf("soak: %d sessions in %v by %d clients (%s), %.1f sessions/s, %d error answers",
		r.sessions, r.loadTime.Round(time.Second), r.st.Clients, r.st.Media, float64(r.sessions)/r.loadTime.Seconds(), r.errors)
	classes := make([]string, 0, len(r.lat))
	for c := range r.lat {
		classes = append(classes, c)
	}
	sort.Strings(classes)
	for _, c := range classes {
		d := r.lat[c]
		sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
		t.Logf("soak: %-16s n=%-7d p50 %6.1f ms  p99 %6.1f ms  max %6.1f ms", c, len(d),
			ms(pct(d, 50)), ms(pct(d, 99)), ms(d[len(d)-1]))
	}
	t.Logf("soak: %-28s %14s %14s %14s %10s %7s", "moment", "bridgeline RSS", "bridgeline heap", "livekit RSS", "goroutines", "rooms")
	for _, s := range []struct {
		name string
		s    sample
	}{{"start", r.start}, {"end of load", r.end}, {fmt.Sprintf("idle (rooms gone + %v)", r.st.Settle), r.idle}} {
		t.Logf("soak: %-28s %11.1f MB %12.1f MB %11.1f MB %10d %7d", s.name, mb(s.s.blRSS), mb(s.s.heap), mb(s.s.lkRSS), s.s.goroutines, s.s.rooms)
		if s.s.lkHeap > 0 {
			t.Logf("soak: %-28s livekit-server heap %.1f MB", s.name, mb(s.s.lkHeap))
		}
	}
	if r.sessions > 0 {
		k := float64(r.sessions) / 1000
		t.Logf("soak: kept per 1000 sessions once idle: bridgeline RSS %.2f MB, heap %.2f MB; livekit-server RSS %.2f MB",
			mb(r.idle.blRSS-r.start.blRSS)/k, mb(r.idle.heap-r.start.heap)/k, mb(r.idle.lkRSS-r.start.lkRSS)/k)
	}
	t.Logf("soak: rooms livekit-server still lists 90 s after the load: %d", r.roomsLeft)
	if r.profileDir != "" {
		t.Logf("soak: heap profiles in %s", r.profileDir)
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
func mb(b int64) float64         { return float64(b) / 1e6 }

func pct(d []time.Duration, p int) time.Duration {
	if len(d) == 0 {
		return 0
	}
	i := (len(d)*p + 99) / 100
	if i > 0 {
		i--
	}
	return d[i]
}

// runSoak starts the stack, drives it and stops it.
func runSoak(t *testing.T, st settings) *report {
	if testing.Short() {
		t.Skip("runs the local stack")
	}
	s := startStack(t)
	r := &report{st: st, lat: map[string][]time.Duration{}, profileDir: os.Getenv("SOAK_PROFILE_DIR")}
	s.warm(st.Media)
	if st.Warmup > 0 {
		w := &report{st: st, lat: map[string][]time.Duration{}}
		ws := st
		ws.Duration = st.Warmup
		s.load(t, ws, w)
		if left := s.quiesce(t, 90*time.Second, st.Settle); left > 0 {
			t.Errorf("livekit-server still lists %d rooms after the warm-up, want 0", left)
		}
		t.Logf("soak: warm-up: %d sessions in %v, %d error answers", w.sessions, w.loadTime.Round(time.Second), w.errors)
		r.errors += w.errors
		if r.firstError == "" {
			r.firstError = w.firstError
		}
	}
	r.start = s.sample(t, 0, "start", r.profileDir)
	s.load(t, st, r)
	r.end = s.sample(t, r.loadTime, "end", r.profileDir)
	r.roomsLeft = s.quiesce(t, 90*time.Second, st.Settle)
	r.idle = s.sample(t, r.loadTime, "idle", r.profileDir)
	return r
}

// warm runs a first session through every path (SQLite, LiveKit, the sim party's SDK),
// so that the start sample is the stack's working size rather than its empty one.
func (s *stack) warm(media string) {
	w := &client{s: s, r: &report{lat: map[string][]time.Duration{}}, n: 99}
	w.session(media)
	time.Sleep(2 * time.Second)
}

// load runs st.Clients clients until st.Duration or st.MaxSessions, adding to r.
func (s *stack) load(t *testing.T, st settings, r *report) {
	t0 := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), st.Duration)
	defer cancel()
	var wg sync.WaitGroup
	var count atomic.Int64
	results := make([]*client, st.Clients)
	for i := range st.Clients {
		c := &client{s: s, r: &report{lat: map[string][]time.Duration{}}, n: i}
		results[i] = c
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil && count.Add(1) <= st.MaxSessions {
				c.iteration(st.Media)
			}
		}()
	}
	// Samples every 10 s while the load runs.
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		tick := time.NewTicker(10 * time.Second)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				smp := s.sample(t, time.Since(t0), "", "")
				r.samples = append(r.samples, smp)
				lk := ""
				if smp.lkHeap > 0 {
					lk = fmt.Sprintf(" (heap %.1f MB)", mb(smp.lkHeap))
				}
				t.Logf("soak: %5.0fs  bridgeline %6.1f MB (heap %6.1f MB, %d goroutines)  livekit-server %6.1f MB%s  rooms %d",
					smp.at.Seconds(), mb(smp.blRSS), mb(smp.heap), smp.goroutines, mb(smp.lkRSS), lk, smp.rooms)
			}
		}
	}()
	wg.Wait()
	cancel()
	<-sampled
	r.loadTime += time.Since(t0)
	for _, c := range results {
		r.sessions += c.sessions
		r.errors += c.r.errors
		if r.firstError == "" {
			r.firstError = c.r.firstError
		}
		for k, v := range c.r.lat {
			r.lat[k] = append(r.lat[k], v...)
		}
	}
}

// quiesce waits until livekit-server lists no room, up to wait (90 s for the soak: past
// its 60 s empty timeout), then idles for settle. It returns the rooms still listed then: rooms that
// livekit-server re-created for a party whose join raced the room's deletion, and that
// it never closes (docs/reliability.md).
func (s *stack) quiesce(t *testing.T, wait, settle time.Duration) int {
	deadline := time.Now().Add(wait)
	left := 0
	for {
		rooms, _ := s.rooms()
		if rooms == 0 {
			break
		}
		if time.Now().After(deadline) {
			left = rooms
			t.Logf("soak: rooms left %v after the load: %s", wait, s.describeRooms())
			// What a sweeper that deletes the rooms of ended sessions again would do.
			s.deleteRooms()
			time.Sleep(5 * time.Second)
			again, _ := s.rooms()
			t.Logf("soak: rooms left after a second DeleteRoom of each: %d", again)
			break
		}
		time.Sleep(time.Second)
	}
	time.Sleep(settle)
	return left
}

// client is one load client.
type client struct {
	s        *stack
	r        *report
	n        int
	i        int
	sessions int64
}

func (c *client) record(class string, d time.Duration, status int, want int, body []byte) bool {
	c.r.lat[class] = append(c.r.lat[class], d)
	if status != want {
		c.r.errors++
		if c.r.firstError == "" {
			c.r.firstError = fmt.Sprintf("%s: %d %s", class, status, strings.TrimSpace(string(body)))
		}
		return false
	}
	return true
}

// session creates a session with the sim party, reads it, and deletes it.
func (c *client) session(media string) {
	c.i++
	handle := fmt.Sprintf("+1555%03d%04d", 200+c.n+1, c.i%10000)
	key := fmt.Sprintf("soak-%d-%d-%d", time.Now().UnixNano(), c.n, c.i)
	d, st, body := c.s.call("POST", "/v1/sessions", `{"platform_handle":"`+handle+`","media":"`+media+`"}`, key)
	if !c.record("sessions.create", d, st, 201, body) {
		return
	}
	c.sessions++
	var ses struct {
		ID string `json:"session_id"`
	}
	json.Unmarshal(body, &ses)
	d, st, body = c.s.call("GET", "/v1/sessions/"+ses.ID, "", "")
	c.record("sessions.get", d, st, 200, body)
	d, st, body = c.s.call("DELETE", "/v1/sessions/"+ses.ID, "", "")
	c.record("sessions.delete", d, st, 200, body)
}

// iteration is one session plus the reads and writes a customer's server mixes in: a
// list of lines and calls each time, an assistant written and published every tenth.
func (c *client) iteration(media string) {
	c.session(media)
	d, st, body := c.s.call("GET", "/v1/lines", "", "")
	c.record("reads", d, st, 200, body)
	d, st, body = c.s.call("GET", "/v1/calls?limit=10", "", "")
	c.record("reads", d, st, 200, body)
	if c.i%10 != 0 {
		return
	}
	d, st, body = c.s.call("POST", "/v1/assistants", `{"name":"Soak","system_prompt":"Be brief.","greeting":"Hello.","avatar_id":"ava_iris"}`, "")
	if !c.record("writes", d, st, 201, body) {
		return
	}
	var a struct {
		ID string `json:"id"`
	}
	json.Unmarshal(body, &a)
	d, st, body = c.s.call("POST", "/v1/assistants/"+a.ID+"/publish", "", "")
	c.record("writes", d, st, 201, body)
	d, st, body = c.s.call("GET", "/v1/assistants?limit=10", "", "")
	c.record("reads", d, st, 200, body)
}

// stack is a running `bridgeline dev`.
type stack struct {
	api, key     string
	lkURL        string
	lkKey, lkSec string
	pprof        string
	cmd          *exec.Cmd
	logs         *lockedBuffer
	client       *http.Client
	roomSvc      *lksdk.RoomServiceClient
}

func (s *stack) call(method, path, body, idem string) (time.Duration, int, []byte) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, _ := http.NewRequest(method, s.api+path, rd)
	req.Header.Set("Authorization", "Bearer "+s.key)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if idem != "" {
		req.Header.Set("Idempotency-Key", idem)
	}
	t0 := time.Now()
	resp, err := s.client.Do(req)
	if err != nil {
		return time.Since(t0), 0, []byte(err.Error())
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return time.Since(t0), resp.StatusCode, b
}

func (s *stack) rooms() (int, int) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := s.roomSvc.ListRooms(ctx, &livekit.ListRoomsRequest{})
	if err != nil {
		return -1, -1
	}
	n := 0
	for _, r := range res.Rooms {
		n += int(r.NumParticipants)
	}
	return len(res.Rooms), n
}

// describeRooms lists the rooms livekit-server holds and who is in them.
func (s *stack) describeRooms() string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := s.roomSvc.ListRooms(ctx, &livekit.ListRoomsRequest{})
	if err != nil {
		return err.Error()
	}
	var b strings.Builder
	for _, r := range res.Rooms {
		fmt.Fprintf(&b, "\n  room %s (created %v ago):", r.Name, time.Since(time.Unix(r.CreationTime, 0)).Round(time.Second))
		ps, err := s.roomSvc.ListParticipants(ctx, &livekit.ListParticipantsRequest{Room: r.Name})
		if err != nil {
			fmt.Fprintf(&b, " %v", err)
			continue
		}
		for _, p := range ps.Participants {
			fmt.Fprintf(&b, " %s (%s, %s, joined %v ago)", p.Identity, p.Kind, p.State, time.Since(time.Unix(p.JoinedAt, 0)).Round(time.Second))
		}
	}
	return b.String()
}

// deleteRooms deletes every room livekit-server lists.
func (s *stack) deleteRooms() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := s.roomSvc.ListRooms(ctx, &livekit.ListRoomsRequest{})
	if err != nil {
		return
	}
	for _, r := range res.Rooms {
		s.roomSvc.DeleteRoom(ctx, &livekit.DeleteRoomRequest{Room: r.Name})
	}
}

var memStatRE = regexp.MustCompile(`(?m)^# (HeapInuse|NumGC) = (\d+)`)

// sample reads both processes' memory; with PPROF_ADDR it also forces a GC in
// bridgeline and reads its live heap and goroutines, and keeps a heap profile in dir.
func (s *stack) sample(t *testing.T, at time.Duration, name, dir string) sample {
	smp := sample{at: at, blRSS: rss(s.cmd.Process.Pid)}
	if pid := childNamed(s.cmd.Process.Pid, "livekit-server"); pid > 0 {
		smp.lkRSS = rss(pid)
	}
	smp.rooms, smp.lkParticipants = s.rooms()
	get := func(base, path string) []byte {
		resp, err := http.Get(base + path)
		if err != nil {
			return nil
		}
		defer resp.Body.Close()
		if resp.StatusCode != 200 {
			return nil
		}
		b, _ := io.ReadAll(resp.Body)
		return b
	}
	if b := get(s.lkURL, "/debug/pprof/heap?gc=1&debug=1"); b != nil {
		for _, m := range memStatRE.FindAllSubmatch(b, -1) {
			if string(m[1]) == "HeapInuse" {
				smp.lkHeap, _ = strconv.ParseInt(string(m[2]), 10, 64)
			}
		}
		if dir != "" {
			if b := get(s.lkURL, "/debug/pprof/heap"); b != nil {
				os.WriteFile(filepath.Join(dir, "livekit-heap-"+name+".pb.gz"), b, 0o644)
			}
			if b := get(s.lkURL, "/debug/pprof/goroutine?debug=1"); b != nil {
				os.WriteFile(filepath.Join(dir, "livekit-goroutine-"+name+".txt"), b, 0o644)
			}
		}
	}
	if s.pprof == "" {
		smp.heapErr = errors.New("the stack runs without its pprof endpoint")
		return smp
	}
	smp.heap, smp.heapErr = heapInuse(get("http://"+s.pprof, "/debug/pprof/heap?gc=1&debug=1"))
	if b := get("http://"+s.pprof, "/debug/pprof/goroutine?debug=1"); b != nil {
		if m := regexp.MustCompile(`goroutine profile: total (\d+)`).FindSubmatch(b); m != nil {
			smp.goroutines, _ = strconv.ParseInt(string(m[1]), 10, 64)
		}
		if dir != "" {
			os.WriteFile(filepath.Join(dir, "goroutine-"+name+".txt"), b, 0o644)
		}
	}
	if dir != "" {
		if b := get("http://"+s.pprof, "/debug/pprof/heap"); b != nil {
			os.WriteFile(filepath.Join(dir, "heap-"+name+".pb.gz"), b, 0o644)
		}
	}
	return smp
}

// heapInuse reads HeapInuse from a debug=1 heap profile (body, or nil when its read
// failed): an error when there is no positive figure to read.
func heapInuse(body []byte) (int64, error) {
	if body == nil {
		return 0, errors.New("GET /debug/pprof/heap failed")
	}
	for _, m := range memStatRE.FindAllSubmatch(body, -1) {
		if string(m[1]) == "HeapInuse" {
			n, err := strconv.ParseInt(string(m[2]), 10, 64)
			if err != nil || n <= 0 {
				return 0, fmt.Errorf("heap profile's HeapInuse %q", m[2])
			}
			return n, nil
		}
	}
	return 0, errors.New("no HeapInuse in the heap profile")
}

// rss is a process's resident set in bytes, 0 if it is gone.
func rss(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb * 1024
		}
	}
	return 0
}

// childNamed finds a child process of parent by its command name.
func childNamed(parent int, name string) int {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...
		s := string(b)
		open, close := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || close < open {
			continue
		}
		f := strings.Fields(s[close+1:])
		if len(f) < 2 || !strings.HasPrefix(s[open+1:close], name[:min(len(name), 15)]) {
			continue
		}
		if pp, _ := strconv.Atoi(f[1]); pp == parent {
			return pid
		}
	}
	return 0
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// repoRoot walks up to the module's go.mod.
func repoRoot(t *testing.T) string {
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && strings.Contains(string(b), "module github.com/bridgeline/bridgeline\n") {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("repository root not found")
		}
		dir = parent
	}
}

// startStack builds bridgeline (or takes SOAK_BRIDGELINE) and runs `bridgeline dev` on
// free loopback ports with its pprof endpoint on, the rate limit and persona workers off.
func startStack(t *testing.T) *stack {
	root := repoRoot(t)
	lkBin := os.Getenv("LIVEKIT_SERVER_BIN")
	if lkBin == "" {
		out, err := exec.Command("bash", filepath.Join(root, "scripts", "build-livekit-server.sh")).Output()
		if err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("livekit-server is required in CI (make deps builds it): %v", err)
			}
			t.Skipf("livekit-server not available: %v", err)
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		lkBin = lines[len(lines)-1]
	}
	if os.Getenv("SOAK_LIVEKIT_PPROF") != "" {
		// livekit-server serves /debug/pprof on its HTTP port in development mode only;
		// a wrapper turns it on in the config the stack writes.
		wrapper := filepath.Join(t.TempDir(), "livekit-server-dev")
		script := "#!/bin/sh\nprintf '\\ndevelopment: true\\n' >> \"$2\"\nexec " + lkBin + " \"$@\"\n"
		if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		lkBin = wrapper
	}
	bin := os.Getenv("SOAK_BRIDGELINE")
	if bin == "" {
		bin = filepath.Join(t.TempDir(), "bridgeline")
		build := exec.Command("go", "build", "-o", bin, "./cmd/bridgeline")
		build.Dir = root
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("go build ./cmd/bridgeline: %v\n%s", err, out)
		}
	}
	apiPort, lkPort, pprofPort := livekittest.FreePort(t, "tcp"), livekittest.FreePort(t, "tcp"), livekittest.FreePort(t, "tcp")
	// With SOAK_PROFILE_DIR the stack's data (its SQLite store, livekit-server's log) and
	// its log stay there for reading afterwards.
	data := filepath.Join(t.TempDir(), "data")
	if dir := os.Getenv("SOAK_PROFILE_DIR"); dir != "" {
		data = filepath.Join(dir, "data")
		os.RemoveAll(data)
	}
	key := "sk_test_" + strconv.FormatInt(time.Now().UnixNano(), 36) + "soaktest000000000000"
	s := &stack{api: fmt.Sprintf("http://127.0.0.1:%d", apiPort), key: key,
		lkURL: fmt.Sprintf("http://127.0.0.1:%d", lkPort), lkKey: "devkey", lkSec: "soak-secret-0123456789-0123456789-abcdef",
		pprof: fmt.Sprintf("127.0.0.1:%d", pprofPort), logs: &lockedBuffer{},
		client: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}}
	s.roomSvc = lksdk.NewRoomServiceClient(s.lkURL, s.lkKey, s.lkSec)
	cmd := exec.Command(bin, "dev")
	cmd.Env = append(os.Environ(), "LIVEKIT_SERVER_BIN="+lkBin, "PORT="+strconv.Itoa(apiPort),
		"BRIDGELINE_DATA="+data, "LIVEKIT_PORT="+strconv.Itoa(lkPort),
		"LIVEKIT_RTC_TCP_PORT="+strconv.Itoa(livekittest.FreePort(t, "tcp")), "LIVEKIT_RTC_UDP_PORT="+strconv.Itoa(livekittest.FreePort(t, "udp")),
		"LIVEKIT_API_KEY="+s.lkKey, "LIVEKIT_API_SECRET="+s.lkSec,
		"PERSONA_WORKERS=0", "DEV_API_KEY="+key, "RATE_LIMIT_RPS=0", "WEBHOOK_ALLOW_LOOPBACK=1", "SIP_PORT=off",
		"PPROF_ADDR="+s.pprof)
	cmd.Stdout, cmd.Stderr = s.logs, s.logs
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s.cmd = cmd
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
		if dir := os.Getenv("SOAK_PROFILE_DIR"); dir != "" {
			os.WriteFile(filepath.Join(dir, "bridgeline.log"), []byte(s.logs.String()), 0o644)
		}
		if t.Failed() {
			log := s.logs.String()
			if len(log) > 8000 {
				log = log[len(log)-8000:]
			}
			t.Logf("stack log (tail):\n%s", log)
		}
	})
	deadline := time.Now().Add(60 * time.Second)
	for {
		if _, st, _ := s.call("GET", "/v1/lines", "", ""); st == 200 {
			break
		}
		select {
		case <-exited:
			t.Fatalf("stack exited:\n%s", s.logs.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("stack did not start:\n%s", s.logs.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	return s
}
