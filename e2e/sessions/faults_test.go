package sessions_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/livekit/protocol/livekit"
	lksdk "github.com/livekit/server-sdk-go/v2"

	"github.com/bridgeline/bridgeline/e2e/harness"
	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/mediafleet/platformsim"
	"github.com/bridgeline/bridgeline/shared/call"
	"github.com/bridgeline/bridgeline/shared/httpapi"
	"github.com/bridgeline/bridgeline/shared/listing"
	"github.com/bridgeline/bridgeline/shared/platform"
	"github.com/bridgeline/bridgeline/shared/rtc"
	"github.com/bridgeline/bridgeline/shared/session"
	"github.com/bridgeline/bridgeline/shared/store/sqlite"
)

// faults are what a case breaks; each is read under mu.
type faults struct {
	mu sync.Mutex
	// liveKitDown fails CreateRoom; tokenFails fails the token mint after CreateRoom.
	liveKitDown, tokenFails bool
	// storeDown fails SaveSession without writing; saveLost writes and then fails (the
	// commit's answer lost).
	storeDown, saveLost bool
	// dialLost dials and then fails (the platform's answer lost).
	dialLost bool
	rooms    []string            // every room CreateRoom made
	dials    map[string][]string // platform call ids by dialled handle, one per call placed
}

func (f *faults) get() faults {
	f.mu.Lock()
	defer f.mu.Unlock()
	return faults{liveKitDown: f.liveKitDown, tokenFails: f.tokenFails, storeDown: f.storeDown, saveLost: f.saveLost, dialLost: f.dialLost}
}

// roomsMade is how many rooms CreateRoom made so far.
func (f *faults) roomsMade() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.rooms)
}

var errInjected = errors.New("injected fault")

type faultyRooms struct {
	session.Rooms
	f *faults
}

func (r faultyRooms) CreateRoom(ctx context.Context, spec rtc.RoomSpec) (rtc.Room, error) {
	if r.f.get().liveKitDown {
		return rtc.Room{}, errInjected
	}
	room, err := r.Rooms.CreateRoom(ctx, spec)
	if err == nil {
		r.f.mu.Lock()
		r.f.rooms = append(r.f.rooms, spec.Name)
		r.f.mu.Unlock()
	}
	return room, err
}

func (r faultyRooms) ParticipantToken(g rtc.Grant) (rtc.Token, error) {
	if r.f.get().tokenFails {
		return rtc.Token{}, errInjected
	}
	return r.Rooms.ParticipantToken(g)
}

// faultyRecords is the real store with SaveSession broken on demand; DueSessions and
// the rest are the store's own.
type faultyRecords struct {
	*sqlite.Store
	f *faults
}

func (r faultyRecords) SaveSession(ctx context.Context, s session.Session, c call.Call, evts []callevent.Event) error {
	ff := r.f.get()
	if ff.storeDown {
		return errInjected
	}
	if err := r.Store.SaveSession(ctx, s, c, evts); err != nil || !ff.saveLost {
		return err
	}
	return errInjected
}

// CreateSession is SaveSession's faults on a create's first write (it takes a slot).
func (r faultyRecords) CreateSession(ctx context.Context, s session.Session, c call.Call, evts []callevent.Event, limit int) error {
	ff := r.f.get()
	if ff.storeDown {
		return errInjected
	}
	if err := r.Store.CreateSession(ctx, s, c, evts, limit); err != nil || !ff.saveLost {
		return err
	}
	return errInjected
}

// countingPlatform is the real sim, counting the calls it places.
type countingPlatform struct {
	platform.Platform
	f *faults
}

func (p countingPlatform) Dial(ctx context.Context, req platform.DialRequest) (string, error) {
	id, err := p.Platform.Dial(ctx, req)
	if err != nil {
		return "", err
	}
	p.f.mu.Lock()
	known := false
	for _, d := range p.f.dials[req.To] {
		known = known || d == id
	}
	if !known {
		p.f.dials[req.To] = append(p.f.dials[req.To], id)
	}
	lost := p.f.dialLost
	p.f.mu.Unlock()
	if lost {
		return "", errInjected
	}
	return id, nil
}

// TestCreateFaults breaks POST /v1/sessions at each step (LiveKit down, after CreateRoom,
// the store down, after the save, after the dial), then retries with the same
// Idempotency-Key once the fault is gone. Each retry dials the party at most once in
// total; a failure before the dial is a 5xx with nothing live left and the key reusable;
// a failure after the dial is replayed, not run again; and once the sweeper ran no room of
// any case is left.
func TestCreateFaults(t *testing.T) {
	st := harness.Start(t, harness.Options{RingDelay: time.Hour})
	tn := st.Tenant(t)
	f := &faults{dials: map[string][]string{}}
	platforms, err := platform.NewRegistry(countingPlatform{st.Sim, f})
	if err != nil {
		t.Fatal(err)
	}
	newService := func(opts ...session.Option) *session.Service {
		svc, err := session.New(faultyRecords{st.Store, f}, faultyRooms{st.RTC, f}, append(opts, session.WithPlatforms(platforms))...)
		if err != nil {
			t.Fatal(err)
		}
		return svc
	}
	svc := newService()
	api, err := httpapi.New(st.Store, st.Store, (&httpapi.Sessions{Service: svc}).Routes(), httpapi.WithLimiter(httpapi.NewLimiter(0, 1)))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api.Handler())
	defer srv.Close()

	post := func(handle, key string) (int, http.Header, []byte) {
		b, _ := json.Marshal(map[string]any{"platform_handle": handle, "media": "audio"})
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/sessions", bytes.NewReader(b))
		req.Header.Set("Authorization", "Bearer "+tn.APIKey)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var buf bytes.Buffer
		buf.ReadFrom(resp.Body)
		return resp.StatusCode, resp.Header, buf.Bytes()
	}
	allSessions := func() []session.Session {
		all, err := svc.List(context.Background(), tn.AccountID, session.ListQuery{Query: listing.Query{Limit: listing.MaxLimit}})
		if err != nil {
			t.Fatal(err)
		}
		return all
	}
	liveSessions := func() []session.Session {
		var live []session.Session
		all := allSessions()
		for _, s := range all {
			if !s.Over() {
				live = append(live, s)
			}
		}
		return live
	}

	tests := []struct {
		name  string
		set   func(*faults)
		first int // the faulty request's status
		// written: the faulty request leaves a record (the save committed, its answer was
		// lost, or the dial failed after it).
		written bool
		// replayed: the retry replays the first answer instead of running again.
		replayed bool
	}{
		{name: "livekit down", set: func(f *faults) { f.liveKitDown = true }, first: http.StatusBadGateway},
		{name: "after CreateRoom", set: func(f *faults) { f.tokenFails = true }, first: http.StatusInternalServerError},
		{name: "store down", set: func(f *faults) { f.storeDown = true }, first: http.StatusInternalServerError},
		{name: "after the save", set: func(f *faults) { f.saveLost = true }, first: http.StatusInternalServerError, written: true},
		{name: "after the dial", set: func(f *faults) { f.dialLost = true }, first: http.StatusBadGateway, written: true, replayed: true},
	}
	// figures are what each case measured, printed as docs/reliability.md's table.
	type figure struct {
		first, retry int
		replayed     bool
		written      int
		dials        int
		rooms        []string
	}
	figures := make([]figure, len(tests))
	for i, tc := range tests {
		f.mu.Lock()
		roomsBefore := len(f.rooms)
		f.mu.Unlock()
		t.Run(tc.name, func(t *testing.T) {
			handle := fmt.Sprintf("+1555777%04d", i)
			key := "fault-" + tc.name
			before := len(allSessions())
			f.mu.Lock()
			tc.set(f)
			f.mu.Unlock()
			status, _, body := post(handle, key)
			f.mu.Lock()
			f.liveKitDown, f.tokenFails, f.storeDown, f.saveLost, f.dialLost = false, false, false, false, false
			f.mu.Unlock()
			if status != tc.first {
				t.Fatalf("faulty POST = %d %s, want %d", status, body, tc.first)
			}
			// A record the faulty request left is ringing, or already failed: deleting its
			// room makes LiveKit report room_finished, which ends it.
			got := len(allSessions()) - before
			if (got == 1) != tc.written || got > 1 {
				t.Errorf("sessions after the faulty POST: %d more, want written=%v", got, tc.written)
			}
			figures[i].first, figures[i].written = status, got

			status, hdr, body := post(handle, key)
			figures[i].retry, figures[i].replayed = status, hdr.Get("Idempotent-Replayed") == "true"
			switch {
			case tc.replayed:
				if status != tc.first || hdr.Get("Idempotent-Replayed") != "true" {
					t.Errorf("retry = %d (replayed %q) %s, want the %d replayed", status, hdr.Get("Idempotent-Replayed"), body, tc.first)
				}
			case status != http.StatusCreated:
				t.Errorf("retry = %d %s, want 201", status, body)
			}
			f.mu.Lock()
			dials := len(f.dials[handle])
			figures[i].rooms = append([]string(nil), f.rooms[roomsBefore:]...)
			f.mu.Unlock()
			figures[i].dials = dials
			if dials != 1 {
				t.Errorf("calls placed to %s over the faulty POST and its retry = %d, want 1", handle, dials)
			}
			if tc.replayed && dials == 1 {
				// The session failed: the call the platform placed is hung up by its
				// Bridgeline id, although the platform's id was never recorded.
				f.mu.Lock()
				id := f.dials[handle][0]
				f.mu.Unlock()
				if c, err := st.Sim.Get(id); err != nil || c.Status == platformsim.StatusRinging {
					t.Errorf("sim call after the failed create = %+v, %v; want it hung up", c.Status, err)
				}
			}
		})
	}

	// A request that fails its reads (an unknown line) deletes the room LiveKit made
	// beside them: the check below finds it gone with the rest.
	roomsBeforeUnknown := f.roomsMade()
	b, _ := json.Marshal(map[string]any{"platform_handle": "+15557770999", "line_id": "line_01m813q4jpa7fqz94g6r8cb30d"})
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/sessions", bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer "+tn.APIKey)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("POST with an unknown line = %d, want 404", resp.StatusCode)
	}
	if got := f.roomsMade(); got != roomsBeforeUnknown+1 {
		t.Errorf("rooms made by the request with an unknown line = %d, want 1 (made beside the reads, then deleted)", got-roomsBeforeUnknown)
	}

	// The sweeper alone (its clock moved on by the ring timeout, which production waits)
	// fails what a lost answer or a retry left ringing and deletes its room. Every room
	// CreateRoom made in any case is then gone: no orphan.
	later := func() time.Time { return time.Now().Add(session.DefaultRingTimeout) }
	if _, err := newService(session.WithClock(later)).Sweep(context.Background()); err != nil {
		t.Fatal(err)
	}
	cfg := st.LiveKit.Config()
	rs := lksdk.NewRoomServiceClient(st.LiveKit.HTTPURL(), cfg.APIKey, cfg.APISecret)
	f.mu.Lock()
	names := append([]string(nil), f.rooms...)
	f.mu.Unlock()
	res, err := rs.ListRooms(context.Background(), &livekit.ListRoomsRequest{Names: names})
	if err != nil {
		t.Fatal(err)
	}
	left := map[string]bool{}
	for _, r := range res.Rooms {
		left[r.Name] = true
		t.Errorf("room %s remains after the sweep", r.Name)
	}
	if live := liveSessions(); len(live) != 0 {
		t.Errorf("%d sessions still live after the sweep", len(live))
	}
	if len(names) < len(tests) {
		t.Errorf("CreateRoom made %d rooms over %d cases and retries; the faults were not reached", len(names), len(tests))
	}

	// docs/reliability.md's table.
	var out strings.Builder
	fmt.Fprintln(&out, "| Fault during POST /v1/sessions | Faulty request | Sessions it left | Retry, same Idempotency-Key | Calls placed (goal 1) | Rooms made | Orphan rooms after the sweeper (goal 0) |")
	fmt.Fprintln(&out, "|---|---|---|---|---|---|---|")
	orphans := 0
	for i, tc := range tests {
		fg := figures[i]
		n := 0
		for _, r := range fg.rooms {
			if left[r] {
				n++
			}
		}
		orphans += n
		retry := fmt.Sprint(fg.retry)
		if fg.replayed {
			retry += " (the first answer replayed)"
		}
		fmt.Fprintf(&out, "| %s | %d | %d | %s | %d | %d | %d |\n", tc.name, fg.first, fg.written, retry, fg.dials, len(fg.rooms), n)
	}
	fmt.Fprintf(&out, "orphan rooms in all: %d of %d rooms made\n", orphans, len(names))
	t.Log("\n" + out.String())
}
