package session_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/shared/account"
	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/call"
	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/line"
	"github.com/bridgeline/bridgeline/shared/persona"
	"github.com/bridgeline/bridgeline/shared/platform"
	"github.com/bridgeline/bridgeline/shared/session"
)

// referringPhone is a telephone platform that transfers: each Transfer is counted and
// answers what refuse says.
type referringPhone struct {
	mu        sync.Mutex
	transfers []platform.Transfer
	refuse    bool
	// reported: the transfer goes through with this error reported (the leg left the
	// room after LiveKit's error, or the bridge lost the phone's answer to the REFER).
	reported error
	hangups  []string // platform call ids hung up
}

func (p *referringPhone) Hangup(_ context.Context, id string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.hangups = append(p.hangups, id)
	return nil
}

func (p *referringPhone) hungUp(id string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Contains(p.hangups, id)
}

func (*referringPhone) Name() string                                 { return "pstn" }
func (*referringPhone) CheckHandle(h string) error                   { return platform.CheckE164(h) }
func (*referringPhone) CanTransfer() bool                            { return true }
func (*referringPhone) TestKeys() bool                               { return false }
func (*referringPhone) Reject(context.Context, string, string) error { return nil }
func (*referringPhone) Answer(context.Context, string, string, platform.Room) error {
	return nil
}
func (*referringPhone) Dial(context.Context, platform.DialRequest) (string, error) {
	return "", errors.New("not dialling")
}
func (p *referringPhone) Transfer(_ context.Context, t platform.Transfer) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.transfers = append(p.transfers, t)
	if p.refuse {
		return platform.ErrTransferFailed
	}
	if p.reported != nil {
		return &platform.TransferReported{Err: p.reported}
	}
	return nil
}
func (p *referringPhone) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.transfers)
}

// jobQueue is a TransferQueue that keeps its jobs, or refuses them.
type jobQueue struct {
	mu   sync.Mutex
	jobs []session.TransferJob
	down bool
}

func (q *jobQueue) EnqueueTransfer(_ context.Context, j session.TransferJob) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.down {
		return errors.New("queue unavailable")
	}
	q.jobs = append(q.jobs, j)
	return nil
}

func (q *jobQueue) take(t *testing.T) session.TransferJob {
	t.Helper()
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.jobs) != 1 {
		t.Fatalf("queued jobs %v, want one", q.jobs)
	}
	j := q.jobs[0]
	q.jobs = nil
	return j
}

// notingRooms keeps the data packets sent into rooms.
type notingRooms struct {
	deletingRooms
	mu   sync.Mutex
	sent []sentData
}

type sentData struct {
	room, topic string
	data        []byte
}

func (r *notingRooms) SendData(_ context.Context, room, topic string, data []byte) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sent = append(r.sent, sentData{room, topic, data})
	return nil
}

func (r *notingRooms) take() []sentData {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.sent
	r.sent = nil
	return s
}

// TestQueuedTransfer: with a TransferQueue (AWS), Transfer records the transfer pending
// and queues it without waiting for the platform; RunTransfer (the queue's consumer)
// refers the call and records the outcome, once however often the job comes; a job
// the queue refused, one that waited past TransferStale and a refused REFER leave the
// transfer failed with the call going on.
func TestQueuedTransfer(t *testing.T) {
	ctx := context.Background()
	st := openSQLite(t, "transfer.db")
	phone, queue := &referringPhone{}, &jobQueue{}
	now := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	reg, err := platform.NewRegistry(phone)
	if err != nil {
		t.Fatal(err)
	}
	rooms := &notingRooms{}
	svc, err := session.New(st, rooms, session.WithPlatforms(reg), session.WithTransferQueue(queue),
		session.WithClock(func() time.Time { return now }), session.WithLog(slog.New(slog.DiscardHandler)),
		session.WithLater(func(func()) { t.Error("a queued transfer ran in the answering process") }))
	if err != nil {
		t.Fatal(err)
	}
	const acct = "acct_transfer"
	// The account and the calls' line: a transfer reads the line's destination policy
	// (a US number, so the US destinations below are allowed).
	if err := st.CreateAccount(ctx, account.Account{ID: acct, Name: "Transfers", CreatedAt: now},
		account.KeyFromText(acct, "sk_live_"+strings.Repeat("t", 24), now)); err != nil {
		t.Fatal(err)
	}
	if err := st.CreateLine(ctx, line.Line{ID: "line_1", AccountID: acct, Handle: "+15550108888", Platform: "pstn",
		Revision: 1, CreatedAt: now, UpdatedAt: now}); err != nil {
		t.Fatal(err)
	}
	handledBy := call.HandledByCustomer
	activeCall := func(t *testing.T) call.Call {
		t.Helper()
		ses := session.Session{ID: ident.New("ses"), AccountID: acct, LineID: "line_1", Mode: session.ModeHuman,
			Media: "audio", PlatformHandle: "+15550107777", Status: session.StatusActive, CreatedAt: now}
		c := call.Call{ID: ident.New("call"), AccountID: acct, Direction: call.Inbound, LineID: "line_1",
			From: "+15550107777", To: "+15550108888", Media: "audio", Status: call.StatusActive, PlatformCallID: "SCL_" + ident.New("x"),
			HandledBy: handledBy, SessionID: ses.ID, Platform: "pstn", StartedAt: now, AnsweredAt: &now}
		ses.CallID = c.ID
		if err := st.SaveSession(ctx, ses, c, nil); err != nil {
			t.Fatal(err)
		}
		return c
	}
	transfer := func(t *testing.T, c call.Call) *call.Transfer {
		t.Helper()
		got, err := st.GetCall(ctx, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		return got.Transfer
	}

	t.Run("queued, run once", func(t *testing.T) {
		c := activeCall(t)
		got, err := svc.Transfer(ctx, acct, c.ID, "+15550109999", session.TransferBy(false))
		if err != nil || got.Transfer == nil || got.Transfer.Status != call.TransferPending {
			t.Fatalf("Transfer = %+v, %v; want the transfer pending", got.Transfer, err)
		}
		if phone.count() != 0 {
			t.Fatal("the platform was asked before the job ran")
		}
		job := queue.take(t)
		if job.CallID != c.ID || !job.RequestedAt.Equal(got.Transfer.RequestedAt) {
			t.Errorf("job = %+v, want call %s requested at %v", job, c.ID, got.Transfer.RequestedAt)
		}
		if err := svc.RunTransfer(ctx, job); err != nil {
			t.Fatal(err)
		}
		if tr := transfer(t, c); tr.Status != call.TransferCompleted || tr.ReportedError != "" {
			t.Errorf("transfer after the run = %+v, want completed, no error reported", tr)
		}
		ended, _ := st.GetCall(ctx, c.ID)
		if ended.EndReason != call.ReasonTransferred {
			t.Errorf("call after the run = %s (%s), want ended transferred", ended.Status, ended.EndReason)
		}
		if err := svc.RunTransfer(ctx, job); err != nil || phone.count() != 1 {
			t.Errorf("redelivered job = %v with %d REFERs, want nothing more done", err, phone.count())
		}
	})

	// The platform reported an error, yet the party left for the destination: the
	// transfer is completed, the call ends as transferred (its leg hung up), and the
	// record keeps the error.
	t.Run("went through despite a reported error", func(t *testing.T) {
		c := activeCall(t)
		if _, err := svc.Transfer(ctx, acct, c.ID, "+15550109999", session.TransferBy(false)); err != nil {
			t.Fatal(err)
		}
		const lost = "rtc: transfer: transaction failed to complete (0 intermediate responses)"
		phone.reported = errors.New(lost)
		defer func() { phone.reported = nil }()
		if err := svc.RunTransfer(ctx, queue.take(t)); err != nil {
			t.Fatalf("RunTransfer = %v, want the transfer completed", err)
		}
		got, _ := st.GetCall(ctx, c.ID)
		if got.Transfer == nil || got.Transfer.Status != call.TransferCompleted || got.Transfer.ReportedError != lost || got.Transfer.Failure != "" {
			t.Errorf("transfer = %+v, want completed with the reported error %q", got.Transfer, lost)
		}
		if got.Status != call.StatusEnded || got.EndReason != call.ReasonTransferred || got.EndedBy != call.EndedByCustomer {
			t.Errorf("call = %s (%s by %s), want ended transferred by the customer", got.Status, got.EndReason, got.EndedBy)
		}
		if ses, _ := st.GetSession(ctx, c.SessionID); !ses.Over() {
			t.Errorf("session %s after the transfer, want it over", ses.Status)
		}
		if !phone.hungUp(c.PlatformCallID) {
			t.Error("the call's leg was not hung up (the bridge that lost the answer never does)")
		}
		if sent := rooms.take(); len(sent) != 0 {
			t.Errorf("a completed transfer sent %v into the room, want no failure notice", sent)
		}
	})

	// The party's leg leaves while the transfer is pending (the platform's hang-up comes
	// before its answer to the REFER): the transfer is completed and the call ends as
	// transferred, once; the job that comes later does nothing.
	t.Run("leg left while pending", func(t *testing.T) {
		c := activeCall(t)
		if _, err := svc.Transfer(ctx, acct, c.ID, "+15550109999", session.TransferBy(false)); err != nil {
			t.Fatal(err)
		}
		job := queue.take(t)
		if err := svc.HandleNotification(ctx, "pstn", platform.Notification{ID: ident.New("ntf"), Event: platform.EventHangup,
			PlatformCallID: c.PlatformCallID}); err != nil {
			t.Fatal(err)
		}
		got, _ := st.GetCall(ctx, c.ID)
		if got.Status != call.StatusEnded || got.EndReason != call.ReasonTransferred || got.Transfer == nil ||
			got.Transfer.Status != call.TransferCompleted || got.Transfer.ReportedError != "" {
			t.Errorf("call after the leg left = %s (%s), transfer %+v; want ended transferred, completed", got.Status, got.EndReason, got.Transfer)
		}
		before := phone.count()
		if err := svc.RunTransfer(ctx, job); err != nil || phone.count() != before {
			t.Errorf("the job after the call ended = %v with %d REFERs, want nothing done", err, phone.count()-before)
		}
	})

	t.Run("queue down", func(t *testing.T) {
		c := activeCall(t)
		queue.down = true
		defer func() { queue.down = false }()
		_, err := svc.Transfer(ctx, acct, c.ID, "+15550109999", session.TransferBy(false))
		if e, ok := apierr.As(err); !ok || e.Status() != 502 {
			t.Errorf("Transfer with the queue down = %v, want a 502", err)
		}
		if tr := transfer(t, c); tr == nil || tr.Status != call.TransferFailed {
			t.Errorf("transfer = %+v, want failed (not left pending)", tr)
		}
	})

	t.Run("stale job", func(t *testing.T) {
		c := activeCall(t)
		if _, err := svc.Transfer(ctx, acct, c.ID, "+15550109999", session.TransferBy(false)); err != nil {
			t.Fatal(err)
		}
		job := queue.take(t)
		before := phone.count()
		saved := now
		now = now.Add(session.TransferStale + time.Second)
		defer func() { now = saved }()
		if err := svc.RunTransfer(ctx, job); err != nil {
			t.Fatal(err)
		}
		if phone.count() != before {
			t.Error("a stale job referred the call")
		}
		if tr := transfer(t, c); tr.Status != call.TransferFailed {
			t.Errorf("transfer = %+v, want failed", tr)
		}
	})

	t.Run("refused", func(t *testing.T) {
		c := activeCall(t)
		if _, err := svc.Transfer(ctx, acct, c.ID, "+15550109999", session.TransferBy(false)); err != nil {
			t.Fatal(err)
		}
		phone.refuse = true
		defer func() { phone.refuse = false }()
		err := svc.RunTransfer(ctx, queue.take(t))
		if e, ok := apierr.As(err); !ok || e.Code != apierr.CodeTransferFailed {
			t.Errorf("RunTransfer of a refused REFER = %v, want transfer_failed", err)
		}
		if tr := transfer(t, c); tr.Status != call.TransferFailed || tr.Failure == "" {
			t.Errorf("transfer = %+v, want failed with its reason", tr)
		}
		if got, _ := st.GetCall(ctx, c.ID); got.Status != call.StatusActive {
			t.Errorf("call after a refused transfer = %s, want it going on", got.Status)
		}
		if sent := rooms.take(); len(sent) != 0 {
			t.Errorf("a failed transfer of a call the customer handles sent %v into its room, want nothing", sent)
		}
		// The leg leaving afterwards (the platform's hang-up) ends the call at once.
		if err := svc.HandleNotification(ctx, "pstn", platform.Notification{ID: ident.New("ntf"), Event: platform.EventHangup,
			PlatformCallID: c.PlatformCallID}); err != nil {
			t.Fatal(err)
		}
		if got, _ := st.GetCall(ctx, c.ID); got.Status != call.StatusEnded || got.EndReason != call.ReasonRemoteHangup ||
			got.Transfer == nil || got.Transfer.Status != call.TransferFailed {
			t.Errorf("call after the leg left = %s (%s), transfer %+v; want ended by the hang-up, the transfer still failed", got.Status, got.EndReason, got.Transfer)
		}
		if ses, _ := st.GetSession(ctx, c.SessionID); !ses.Over() {
			t.Errorf("session %s after the leg left, want it over", ses.Status)
		}
	})

	// A call an assistant handles: the failure of a transfer under way is told in its
	// room, for the assistant to tell the caller; a job the queue refused touched no call,
	// and nothing is said.
	t.Run("refused, the assistant's call", func(t *testing.T) {
		handledBy = call.HandledByAssistant
		defer func() { handledBy = call.HandledByCustomer }()
		c := activeCall(t)
		if _, err := svc.Transfer(ctx, acct, c.ID, "+15550109999", session.TransferBy(false)); err != nil {
			t.Fatal(err)
		}
		phone.refuse = true
		defer func() { phone.refuse = false }()
		job := queue.take(t)
		if err := svc.RunTransfer(ctx, job); err == nil {
			t.Fatal("RunTransfer of a refused REFER succeeded")
		}
		sent := rooms.take()
		if len(sent) != 1 || sent[0].room != c.SessionID || sent[0].topic != persona.TransferTopic {
			t.Fatalf("sent into rooms %v, want one notice on %s into %s", sent, persona.TransferTopic, c.SessionID)
		}
		var n persona.TransferNotice
		if err := json.Unmarshal(sent[0].data, &n); err != nil {
			t.Fatal(err)
		}
		want := persona.TransferNotice{CallID: c.ID, To: "+15550109999", Status: persona.TransferFailed,
			Failure: "the destination refused the transfer or did not answer", By: "customer", RequestedAt: job.RequestedAt}
		if n != want {
			t.Errorf("notice = %+v, want %+v", n, want)
		}
		if err := svc.RunTransfer(ctx, job); err != nil || len(rooms.take()) != 0 {
			t.Errorf("redelivered job = %v, want nothing done and nothing said again", err)
		}

		c = activeCall(t)
		queue.down = true
		defer func() { queue.down = false }()
		if _, err := svc.Transfer(ctx, acct, c.ID, "+15550109999", session.TransferBy(false)); err == nil {
			t.Fatal("Transfer with the queue down succeeded")
		}
		if sent := rooms.take(); len(sent) != 0 {
			t.Errorf("a transfer the queue refused sent %v, want nothing (the call was not touched)", sent)
		}
	})
}
