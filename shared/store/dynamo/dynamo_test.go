package dynamo_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/decision"
	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/listing"
	"github.com/bridgeline/bridgeline/shared/store/dynamo"
	"github.com/bridgeline/bridgeline/shared/store/dynamo/dynamolocal"
	"github.com/bridgeline/bridgeline/shared/store/storetest"
)

func TestMain(m *testing.M) { os.Exit(dynamolocal.Main(m)) }

// newStore opens a Store on fresh tables in DynamoDB Local (dynamolocal.NewStore).
func newStore(t *testing.T) *dynamo.Store { return dynamolocal.NewStore(t) }

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Store { return newStore(t) })
}

// TestEndpointFromEnvironment: with no Endpoint in the config, AWS_ENDPOINT_URL (what SAM
// CLI and LocalStack users set) decides where requests go.
func TestEndpointFromEnvironment(t *testing.T) {
	endpoint := dynamolocal.Endpoint(t)
	t.Setenv("AWS_ENDPOINT_URL", endpoint)
	t.Setenv("AWS_ACCESS_KEY_ID", "local")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "local")
	t.Setenv("AWS_REGION", "us-east-1")
	ctx := context.Background()
	prefix := strings.ToLower(ident.New("t")) + "-"
	s, err := dynamo.Open(ctx, dynamo.Config{Tables: dynamo.Tables{dynamo.Accounts: prefix + "accounts"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CreateTables(ctx); err != nil {
		t.Fatalf("CreateTables through AWS_ENDPOINT_URL: %v", err)
	}
	defer s.DeleteTables(ctx)
	if _, err := s.GetAccount(ctx, "acct_none"); !errors.Is(err, apierr.ErrNotFound) {
		t.Errorf("GetAccount = %v, want ErrNotFound", err)
	}
}

// TestUnconfiguredTable: a process given only some tables (a function's grants) gets a
// clear error naming the variable, before any request leaves.
func TestUnconfiguredTable(t *testing.T) {
	s := dynamo.New(nil, dynamo.Tables{dynamo.Accounts: "x-accounts"})
	_, err := s.GetAssistant(context.Background(), "asst_1")
	if err == nil || !strings.Contains(err.Error(), "TABLE_ASSISTANTS") {
		t.Errorf("GetAssistant without its table: err = %v, want one naming TABLE_ASSISTANTS", err)
	}
}

func TestLogicalIDs(t *testing.T) {
	tests := map[dynamo.Table]string{
		dynamo.Accounts:    "AccountsTable",
		dynamo.APIKeys:     "APIKeysTable",
		dynamo.LineHandles: "LineHandlesTable",
	}
	for table, want := range tests {
		if got := table.LogicalID(); got != want {
			t.Errorf("%s.LogicalID() = %q, want %q", table, got, want)
		}
	}
}

func TestWebhookConformance(t *testing.T) {
	storetest.RunWebhooks(t, func(t *testing.T) storetest.WebhookStore { return newStore(t) })
}

// TestEventLog: events written through EventPut (as a store's transactions write them)
// read back by id and list newest first, per account and type.
func TestEventLog(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	acct := ident.New("acct")
	now := time.Now().UTC().Truncate(time.Millisecond)
	var ids []string
	for i, typ := range []string{callevent.TypeCallAnswered, callevent.TypeCallEnded, callevent.TypeCallEnded} {
		e := callevent.Event{ID: ident.New("evt"), AccountID: acct, Type: typ, CreatedAt: now.Add(time.Duration(i) * time.Second),
			Data: json.RawMessage(`{"call_id":"call_1"}`)}
		put, err := s.EventPut(e)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Client().TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{put}}); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, e.ID)
	}
	other := callevent.Event{ID: ident.New("evt"), AccountID: ident.New("acct"), Type: callevent.TypeCallEnded, CreatedAt: now, Data: json.RawMessage(`{}`)}
	put, _ := s.EventPut(other)
	if _, err := s.Client().TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{put}}); err != nil {
		t.Fatal(err)
	}

	got, err := s.GetEvent(ctx, ids[0])
	if err != nil {
		t.Fatal(err)
	}
	if got.AccountID != acct || got.Type != callevent.TypeCallAnswered || string(got.Data) != `{"call_id":"call_1"}` || !got.CreatedAt.Equal(now) {
		t.Errorf("GetEvent = %+v", got)
	}
	if _, err := s.GetEvent(ctx, ident.New("evt")); !errors.Is(err, apierr.ErrNotFound) {
		t.Errorf("GetEvent(unknown) = %v, want ErrNotFound", err)
	}
	list := func(typ string, q listing.Query) []string {
		evts, err := s.ListEvents(ctx, acct, typ, q)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range evts {
			out = append(out, e.ID)
		}
		return out
	}
	tests := []struct {
		name string
		typ  string
		q    listing.Query
		want []string
	}{
		{"all newest first", "", listing.Query{Limit: 10}, []string{ids[2], ids[1], ids[0]}},
		{"limit fetches one more", "", listing.Query{Limit: 1}, []string{ids[2], ids[1]}},
		{"starting after", "", listing.Query{Limit: 10, StartingAfter: ids[2]}, []string{ids[1], ids[0]}},
		{"one type", callevent.TypeCallEnded, listing.Query{Limit: 10}, []string{ids[2], ids[1]}},
	}
	for _, tt := range tests {
		if got := list(tt.typ, tt.q); fmt.Sprint(got) != fmt.Sprint(tt.want) {
			t.Errorf("%s: ListEvents = %v, want %v", tt.name, got, tt.want)
		}
	}
	// The same event id is written once.
	dup, _ := s.EventPut(callevent.Event{ID: ids[0], AccountID: acct, Type: callevent.TypeCallEnded, CreatedAt: now, Data: json.RawMessage(`{}`)})
	if _, err := s.Client().TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{dup}}); err == nil {
		t.Error("writing an existing event id succeeded, want a failed condition")
	}
}

func TestEventLogConformance(t *testing.T) {
	storetest.RunEventLog(t, func(t *testing.T) storetest.EventLogStore { return newStore(t) })
}

func TestDecisionConformance(t *testing.T) {
	storetest.RunDecisions(t, func(t *testing.T) decision.Store { return newStore(t) })
}

func TestSessionConformance(t *testing.T) {
	storetest.RunSessions(t, func(t *testing.T) storetest.SessionStore { return newStore(t) })
}

func TestUsageConformance(t *testing.T) {
	storetest.RunUsage(t, func(t *testing.T) storetest.UsageStore { return newStore(t) })
}

func TestQualityConformance(t *testing.T) {
	storetest.RunQuality(t, func(t *testing.T) storetest.QualityStore { return newStore(t) })
}

func TestRetention(t *testing.T) {
	storetest.RunRetention(t, func(t *testing.T) storetest.RetentionStore { return newStore(t) })
}

func TestSweepIndexConformance(t *testing.T) {
	storetest.RunSweepIndex(t, func(t *testing.T) storetest.SweepIndexStore { return newStore(t) })
}

func TestSIPTrunkConformance(t *testing.T) {
	storetest.RunSIPTrunks(t, func(t *testing.T) storetest.SIPTrunkStore { return newStore(t) })
}

func TestCampaignConformance(t *testing.T) {
	storetest.RunCampaigns(t, func(t *testing.T) storetest.CampaignEvents { return newStore(t) })
}

func TestSessionLimitConformance(t *testing.T) {
	storetest.RunSessionLimits(t, func(t *testing.T) storetest.SessionLimitStore { return newStore(t) })
}

// TestEveryConformanceSuiteRuns: each storetest.Run* suite is run against this store
// here, so a suite added for a new interface is not silently skipped on DynamoDB.
func TestEveryConformanceSuiteRuns(t *testing.T) {
	suites, err := filepath.Glob("../storetest/*.go")
	if err != nil || len(suites) == 0 {
		t.Fatalf("no storetest sources: %v", err)
	}
	self, err := os.ReadFile("dynamo_test.go")
	if err != nil {
		t.Fatal(err)
	}
	runs := regexp.MustCompile(`(?m)^func (Run\w*)\(`)
	found := 0
	for _, f := range suites {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range runs.FindAllStringSubmatch(string(b), -1) {
			found++
			if !strings.Contains(string(self), "storetest."+m[1]+"(") {
				t.Errorf("storetest.%s (%s) is not run against the DynamoDB store", m[1], filepath.Base(f))
			}
		}
	}
	if found == 0 {
		t.Error("found no storetest.Run* suites")
	}
}

func TestAvatarConformance(t *testing.T) {
	storetest.RunAvatars(t, func(t *testing.T) storetest.AvatarStore { return newStore(t) })
}
