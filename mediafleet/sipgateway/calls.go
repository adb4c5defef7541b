package sipgateway

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/livekit/protocol/livekit"

	"github.com/bridgeline/bridgeline/shared/lktoken"
	"github.com/bridgeline/bridgeline/shared/platform"
	"github.com/bridgeline/bridgeline/shared/platform/sip"
	"github.com/bridgeline/bridgeline/shared/redact"
	"github.com/bridgeline/bridgeline/shared/rtc"
)

// callState is what the gateway knows of one of the bridge's calls.
type callState struct {
	pcid     string // the bridge's call id
	inbound  bool
	from, to string
	trunk    string        // inbound: the Bridgeline trunk the call authenticated as
	media    string        // platform.MediaVideo from the video bridge, else audio
	decided  chan struct{} // inbound: closed once the control plane answered
	notes    chan platform.Notification

	mu          sync.Mutex
	callID      string // Bridgeline's
	token       string // inbound: the session room's token the joins go on with
	reject      string // inbound: why the call was refused
	conns       int
	active      bool // the bridge reported the call answered
	left        bool // the bridge left (a final leave), with leaveReason
	leaveReason livekit.DisconnectReason
	removed     bool // livekit-server ordered it out: Bridgeline ended the call
	ended       bool
	endedAt     time.Time
	seen        time.Time
	lost        *time.Timer
	notesClosed bool
}

// closeNotes ends the delivery of the call's notifications once those queued are sent;
// st.mu held.
func (st *callState) closeNotes() {
	if !st.notesClosed {
		st.notesClosed = true
		close(st.notes)
	}
}

// lookup is the state of call pcid, if the gateway has it.
func (g *Gateway) lookup(pcid string) *callState {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.calls[pcid]
}

// inbound is the state of an inbound call, decided: its first join asks the control
// plane (for at most JoinWait), and joins that come meanwhile wait for the same answer.
// Nil when the gateway is stopping.
func (g *Gateway) inbound(ctx context.Context, pcid string, claims *lktoken.Claims) *callState {
	g.mu.Lock()
	st, ok := g.calls[pcid]
	if !ok {
		st = g.newCall(pcid, true, claims.Attributes[rtc.AttrSIPPhoneNumber], claims.Attributes[rtc.AttrSIPTrunkNumber])
		st.trunk = sip.TrunkOfRoom(claims.Video.Room)
		if claims.Attributes[sip.AttrMedia] == platform.MediaVideo {
			st.media = platform.MediaVideo
		}
		g.calls[pcid] = st
	}
	g.mu.Unlock()
	if !ok {
		g.decide(st)
	}
	select {
	case <-st.decided:
		return st
	case <-ctx.Done():
		return st // the bridge gave up; the state says so once decided
	case <-g.ctx.Done():
		return nil
	}
}

// decide asks the control plane about an inbound call and keeps the answer. A pending
// reply (a customer_decides call ringing undecided) is asked again every
// sip.PendingRetry, each time as a new notification, so that no request of the control
// plane waits for the customer: the answer comes in one of them, until JoinWait.
func (g *Gateway) decide(st *callState) {
	ctx, cancel := context.WithTimeout(g.ctx, g.cfg.JoinWait)
	defer cancel()
	var reply sip.InboundReply
	err := g.deliver(ctx, newNotification(platform.EventInbound, st), &reply)
	for err == nil && reply.Pending {
		select {
		case <-time.After(sip.PendingRetry):
		case <-ctx.Done():
			err = fmt.Errorf("undecided after %s: %w", g.cfg.JoinWait, ctx.Err())
			continue
		}
		reply = sip.InboundReply{}
		err = g.deliver(ctx, newNotification(platform.EventInbound, st), &reply)
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	defer close(st.decided)
	switch {
	case err != nil:
		g.log.Error("inbound call not routed", "platform_call_id", st.pcid, "to", redact.Number(st.to), "err", err)
		st.reject = "the control plane did not answer"
	case reply.Answer == nil:
		g.log.Info("inbound call refused", "platform_call_id", st.pcid, "to", redact.Number(st.to), "reason", reply.Reject)
		st.reject = reply.Reject
	default:
		g.log.Info("inbound call answered", "platform_call_id", st.pcid, "call_id", reply.CallID, "room", reply.Answer.Name)
		st.callID, st.token = reply.CallID, reply.Answer.Token
	}
	if st.reject != "" {
		st.ended, st.endedAt = true, time.Now()
		st.closeNotes()
	}
}

// outbound is the state of a call the control plane dialled (its token's metadata names
// Bridgeline's call), or of a call the gateway has already: nil for a SIP participant
// that is neither.
func (g *Gateway) outbound(pcid string, claims *lktoken.Claims) *callState {
	g.mu.Lock()
	defer g.mu.Unlock()
	if st, ok := g.calls[pcid]; ok {
		return st
	}
	var meta sip.CallMetadata
	if json.Unmarshal([]byte(claims.Metadata), &meta) != nil || meta.CallID == "" {
		return nil
	}
	st := g.newCall(pcid, false, "", claims.Attributes[rtc.AttrSIPPhoneNumber])
	st.callID = meta.CallID
	st.media = claims.Attributes[sip.AttrMedia]
	close(st.decided)
	g.calls[pcid] = st
	return st
}

// newCall makes a call's state and starts the delivery of its notifications; g.mu held.
func (g *Gateway) newCall(pcid string, inbound bool, from, to string) *callState {
	st := &callState{pcid: pcid, inbound: inbound, from: from, to: to, decided: make(chan struct{}),
		notes: make(chan platform.Notification, 8), seen: time.Now()}
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		for n := range st.notes {
			g.log.Debug("notify", "platform_call_id", n.PlatformCallID, "event", n.Event)
			ctx, cancel := context.WithTimeout(g.ctx, 30*time.Second)
			if err := g.deliver(ctx, n, nil); err != nil {
				g.log.Error("notification not delivered", "event", n.Event, "platform_call_id", n.PlatformCallID, "err", err)
			}
			cancel()
		}
	}()
	return st
}

// connected counts a signal connection of the call.
func (st *callState) connected() {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.conns++
	st.seen = time.Now()
	if st.lost != nil {
		st.lost.Stop()
		st.lost = nil
	}
}

// answered: the bridge reported the call active. A dialled call's answer is news to the
// control plane; an inbound call was answered there when it was routed.
func (g *Gateway) answered(st *callState) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.active || st.ended {
		return
	}
	st.active = true
	if !st.inbound {
		g.queue(st, newNotification(platform.EventAnswered, st))
	}
}

// disconnected: a signal connection of the call closed. After a leave, or an order of
// livekit-server's, the call is over; otherwise it is given ReconnectWait to come back.
func (g *Gateway) disconnected(st *callState) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.conns--
	st.seen = time.Now()
	g.log.Debug("call disconnected", "platform_call_id", st.pcid, "conns", st.conns, "ended", st.ended, "left", st.left, "removed", st.removed)
	if st.conns > 0 || st.ended {
		return
	}
	if st.left || st.removed {
		g.endLocked(st)
		return
	}
	st.lost = time.AfterFunc(g.cfg.ReconnectWait, func() {
		st.mu.Lock()
		defer st.mu.Unlock()
		if st.conns == 0 && !st.ended {
			g.log.Warn("SIP call's connection lost", "platform_call_id", st.pcid, "call_id", st.callID)
			g.endLocked(st)
		}
	})
}

// endLocked ends the call and tells the control plane how, unless it ended it itself:
// a dialled call that never answered failed by its leave's reason (busy, no answer, or
// else failed); any other call hung up. st.mu held.
func (g *Gateway) endLocked(st *callState) {
	st.ended, st.endedAt = true, time.Now()
	if st.removed {
		st.closeNotes()
		return // livekit-server took it out: Bridgeline ended the call
	}
	event := platform.EventHangup
	if !st.inbound && !st.active {
		switch st.leaveReason {
		case livekit.DisconnectReason_USER_REJECTED:
			event = platform.EventBusy
		case livekit.DisconnectReason_USER_UNAVAILABLE:
			event = platform.EventNoAnswer
		default:
			event = platform.EventFailed
		}
	}
	n := newNotification(event, st)
	g.log.Debug("call ended", "platform_call_id", st.pcid, "event", event)
	if st.left {
		n.Reason = st.leaveReason.String()
	} else {
		n.Reason = "connection lost"
	}
	g.queue(st, n)
	st.closeNotes()
}

// queue hands n to the call's delivery; st.mu held.
func (g *Gateway) queue(st *callState, n platform.Notification) {
	if st.notesClosed {
		return
	}
	select {
	case st.notes <- n:
	default:
		g.log.Error("notification queue full", "event", n.Event, "platform_call_id", st.pcid)
	}
}

// sweep forgets ended calls after keepEnded, and calls with no connection after keepIdle.
func (g *Gateway) sweep() {
	defer g.wg.Done()
	t := time.NewTicker(30 * time.Second)
	defer t.Stop()
	for {
		select {
		case <-g.ctx.Done():
			g.mu.Lock()
			for pcid, st := range g.calls {
				st.mu.Lock()
				st.closeNotes()
				st.mu.Unlock()
				delete(g.calls, pcid)
			}
			g.mu.Unlock()
			return
		case now := <-t.C:
			g.mu.Lock()
			for pcid, st := range g.calls {
				st.mu.Lock()
				forget := (st.ended && now.Sub(st.endedAt) > keepEnded) || (st.conns == 0 && now.Sub(st.seen) > keepIdle)
				if forget {
					st.closeNotes()
					delete(g.calls, pcid)
				}
				st.mu.Unlock()
			}
			g.mu.Unlock()
		}
	}
}
