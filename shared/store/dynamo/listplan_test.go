package dynamo_test

import (
	"context"
	"sync"
	"testing"
	"time"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"

	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/shared/call"
	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/listing"
	"github.com/bridgeline/bridgeline/shared/session"
	"github.com/bridgeline/bridgeline/shared/store/dynamo"
)

// recorder notes every DynamoDB operation a client sends, with its input.
type recorder struct {
	mu  sync.Mutex
	ops []recorded
}

type recorded struct {
	op    string
	input any
}

func (r *recorder) take() []recorded {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.ops
	r.ops = nil
	return out
}

// recordingStore is a Store on the same tables as s whose client records what it sends
// to DynamoDB Local (an SDK middleware: the requests still go out).
func recordingStore(s *dynamo.Store) (*dynamo.Store, *recorder) {
	rec := &recorder{}
	client := dynamodb.New(s.Client().Options(), func(o *dynamodb.Options) {
		o.APIOptions = append(o.APIOptions, func(st *middleware.Stack) error {
			return st.Initialize.Add(middleware.InitializeMiddlewareFunc("record",
				func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
					rec.mu.Lock()
					rec.ops = append(rec.ops, recorded{awsmiddleware.GetOperationName(ctx), in.Parameters})
					rec.mu.Unlock()
					return next.HandleInitialize(ctx, in)
				}), middleware.After)
		})
	})
	return dynamo.New(client, s.Tables()), rec
}

// TestListFiltersQueryIndexes: every list filter is read by Query on the index that
// serves it, with a key condition and no filter expression, in at most as many queries
// as the filter has index partitions (a status and a direction: one; a status alone:
// one per direction; a direction alone: one per status). Never a Scan.
func TestListFiltersQueryIndexes(t *testing.T) {
	base := newStore(t)
	s, rec := recordingStore(base)
	ctx := context.Background()
	acct, line, asst := ident.New("acct"), ident.New("line"), ident.New("asst")
	now := time.Now().UTC()
	var sessionID string
	for i := range 4 {
		ses := session.Session{ID: ident.New("ses"), AccountID: acct, LineID: line, Mode: session.ModeAssistant,
			Status: session.Statuses[i%len(session.Statuses)], CreatedAt: now}
		c := call.Call{ID: ident.New("call"), AccountID: acct, Direction: call.Directions[i%2], LineID: line,
			AssistantID: asst, SessionID: ses.ID, Status: call.Statuses[i], StartedAt: now}
		ses.CallID = c.ID
		if err := s.SaveSession(ctx, ses, c, []callevent.Event{{ID: ident.New("evt"), AccountID: acct,
			Type: callevent.TypeCallEnded, CreatedAt: now, Data: []byte(`{}`)}}); err != nil {
			t.Fatal(err)
		}
		sessionID = ses.ID
	}
	created := listing.Query{Limit: 10, IDFrom: ident.Floor("call", now.Add(-time.Minute)), IDTo: ident.Ceil("call", now.Add(time.Minute))}
	page := listing.Query{Limit: 10}
	nStatus, nDir := len(call.Statuses), len(call.Directions)
	for _, tc := range []struct {
		name        string
		list        func() error
		wantIndex   string
		wantQueries int
	}{
		{"calls", calls(s, acct, call.ListQuery{Query: page}), "by_account", 1},
		{"calls by status", calls(s, acct, call.ListQuery{Query: page, Status: call.StatusEnded}), "by_account_state", nDir},
		{"calls by direction", calls(s, acct, call.ListQuery{Query: page, Direction: call.Inbound}), "by_account_state", nStatus},
		{"calls by status and direction", calls(s, acct, call.ListQuery{Query: page, Status: call.StatusEnded, Direction: call.Inbound}), "by_account_state", 1},
		{"calls by line", calls(s, acct, call.ListQuery{Query: page, LineID: line}), "by_account_line", 1},
		{"calls by line and status", calls(s, acct, call.ListQuery{Query: page, LineID: line, Status: call.StatusActive}), "by_account_line_state", nDir},
		{"calls by assistant", calls(s, acct, call.ListQuery{Query: page, AssistantID: asst}), "by_account_assistant", 1},
		{"calls by assistant, status and direction", calls(s, acct, call.ListQuery{Query: page, AssistantID: asst, Status: call.StatusActive, Direction: call.Outbound}), "by_account_assistant_state", 1},
		{"calls by line and assistant", calls(s, acct, call.ListQuery{Query: page, LineID: line, AssistantID: asst}), "by_account_line_assistant_state", nStatus * nDir},
		{"calls by line, assistant and status", calls(s, acct, call.ListQuery{Query: page, LineID: line, AssistantID: asst, Status: call.StatusRinging}), "by_account_line_assistant_state", nDir},
		{"calls by session and status", calls(s, acct, call.ListQuery{Query: page, SessionID: sessionID, Status: call.StatusRinging}), "by_account_session", 1},
		{"calls by created", calls(s, acct, call.ListQuery{Query: created}), "by_account", 1},
		{"calls by created, ending_before", calls(s, acct, call.ListQuery{Query: listing.Query{Limit: 2, EndingBefore: ident.Floor("call", now.Add(-time.Minute))}}), "by_account", 1},
		{"sessions", func() error { _, err := s.ListSessions(ctx, acct, session.ListQuery{Query: page}); return err }, "by_account", 1},
		{"sessions by status", func() error {
			_, err := s.ListSessions(ctx, acct, session.ListQuery{Query: page, Status: session.StatusEnded})
			return err
		}, "by_account_status", 1},
		{"events by type and created", func() error {
			_, err := s.ListEvents(ctx, acct, callevent.TypeCallEnded, listing.Query{Limit: 10,
				IDFrom: ident.Floor("evt", now.Add(-time.Minute)), IDTo: ident.Ceil("evt", now.Add(time.Minute))})
			return err
		}, "by_account_type", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec.take()
			if err := tc.list(); err != nil {
				t.Fatal(err)
			}
			ops := rec.take()
			if len(ops) == 0 || len(ops) > tc.wantQueries {
				t.Errorf("%d operations, want 1 to %d", len(ops), tc.wantQueries)
			}
			for _, op := range ops {
				q, ok := op.input.(*dynamodb.QueryInput)
				if op.op != "Query" || !ok {
					t.Errorf("operation %s, want Query", op.op)
					continue
				}
				if q.IndexName == nil || *q.IndexName != tc.wantIndex {
					t.Errorf("Query on index %v, want %s", deref(q.IndexName), tc.wantIndex)
				}
				if q.KeyConditionExpression == nil || q.FilterExpression != nil {
					t.Errorf("Query key condition %v, filter %v; want a key condition and no filter",
						deref(q.KeyConditionExpression), deref(q.FilterExpression))
				}
			}
		})
	}
}

func calls(s *dynamo.Store, acct string, q call.ListQuery) func() error {
	return func() error {
		_, err := s.ListCalls(context.Background(), acct, q)
		return err
	}
}

func deref(p *string) string {
	if p == nil {
		return "<nil>"
	}
	return *p
}
