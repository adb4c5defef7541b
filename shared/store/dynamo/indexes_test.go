package dynamo_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/bridgeline/bridgeline/shared/call"
	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/listing"
	"github.com/bridgeline/bridgeline/shared/session"
	"github.com/bridgeline/bridgeline/shared/store/dynamo"
)

// TestOldTablesGetTheFilterIndexesAndBackfill: tables made before the list filter
// indexes and the sweep index (as a deployed stack or a DynamoDB Local data file has
// them) get the indexes from CreateTables, and BackfillListKeys makes the records
// written before them listable by the filters, and a live session due to the sweeper at
// once.
func TestOldTablesGetTheFilterIndexesAndBackfill(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	// Make the tables as they were: without the filter indexes and the due index.
	for _, tbl := range []dynamo.Table{dynamo.Calls, dynamo.Sessions} {
		name := s.Tables().Name(tbl)
		if _, err := s.Client().DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(name)}); err != nil {
			t.Fatal(err)
		}
		if err := dynamodb.NewTableNotExistsWaiter(s.Client()).Wait(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)}, time.Minute); err != nil {
			t.Fatal(err)
		}
		d, _ := dynamo.DefinitionOf(tbl)
		in := d.CreateTableInput(name)
		in.GlobalSecondaryIndexes = slices.DeleteFunc(in.GlobalSecondaryIndexes, func(ix types.GlobalSecondaryIndex) bool {
			n := aws.ToString(ix.IndexName)
			return n != "by_account" && n != "by_account_line" && n != "by_account_session"
		})
		used := map[string]bool{"id": true}
		for _, ix := range in.GlobalSecondaryIndexes {
			for _, k := range ix.KeySchema {
				used[aws.ToString(k.AttributeName)] = true
			}
		}
		in.AttributeDefinitions = slices.DeleteFunc(in.AttributeDefinitions, func(a types.AttributeDefinition) bool {
			return !used[aws.ToString(a.AttributeName)]
		})
		if _, err := s.Client().CreateTable(ctx, in); err != nil {
			t.Fatal(err)
		}
	}
	// A record written by the old code: no filter keys.
	acct := ident.New("acct")
	ses := session.Session{ID: ident.New("ses"), AccountID: acct, Status: session.StatusEnded, CreatedAt: time.Now()}
	c := call.Call{ID: ident.New("call"), AccountID: acct, Direction: call.Inbound, Status: call.StatusEnded,
		LineID: ident.New("line"), AssistantID: ident.New("asst"), SessionID: ses.ID, StartedAt: time.Now()}
	ses.CallID = c.ID
	// And a live one: the old code gave it its shard, but no due key.
	live := session.Session{ID: ident.New("ses"), AccountID: acct, Status: session.StatusRinging, CreatedAt: time.Now()}
	liveCall := call.Call{ID: ident.New("call"), AccountID: acct, Direction: call.Outbound, Status: call.StatusRinging,
		SessionID: live.ID, StartedAt: time.Now()}
	live.CallID = liveCall.ID
	for _, p := range []struct {
		ses session.Session
		c   call.Call
	}{{ses, c}, {live, liveCall}} {
		if err := s.SaveSession(ctx, p.ses, p.c, nil); err != nil {
			t.Fatal(err)
		}
		for _, tbl := range []dynamo.Table{dynamo.Calls, dynamo.Sessions} {
			_, err := s.Client().UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(s.Tables().Name(tbl)),
				Key:              map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: map[dynamo.Table]string{dynamo.Calls: p.c.ID, dynamo.Sessions: p.ses.ID}[tbl]}},
				UpdateExpression: aws.String("REMOVE account_state, account_line_state, account_assistant, account_assistant_state, account_line_assistant_state, account_status, sweep_due")})
			if err != nil {
				t.Fatal(err)
			}
		}
	}

	if err := s.CreateTables(ctx); err != nil {
		t.Fatalf("CreateTables over the old tables: %v", err)
	}
	q := call.ListQuery{Query: listing.Query{Limit: 5}, Status: call.StatusEnded, AssistantID: c.AssistantID}
	if got, err := s.ListCalls(ctx, acct, q); err != nil || len(got) != 0 {
		t.Fatalf("ListCalls before the backfill = %d calls, %v; want none (no keys yet)", len(got), err)
	}
	if got, err := s.DueSessions(ctx, time.Now(), session.DueKey{}, 10); err != nil || len(got) != 0 {
		t.Fatalf("DueSessions before the backfill = %d, %v; want none (no key yet)", len(got), err)
	}
	n, err := s.BackfillListKeys(ctx)
	if err != nil || n != 4 {
		t.Fatalf("BackfillListKeys = %d, %v; want 4 records", n, err)
	}
	if got, err := s.DueSessions(ctx, time.Time{}, session.DueKey{}, 10); err != nil || len(got) != 1 || got[0].ID != live.ID {
		t.Errorf("DueSessions(the zero time) after the backfill = %d, %v; want the live session, due at once", len(got), err)
	}
	if got, err := s.ListCalls(ctx, acct, q); err != nil || len(got) != 1 || got[0].ID != c.ID {
		t.Errorf("ListCalls after the backfill = %v, %v; want [%s]", got, err, c.ID)
	}
	if got, err := s.ListSessions(ctx, acct, session.ListQuery{Query: listing.Query{Limit: 5}, Status: session.StatusEnded}); err != nil || len(got) != 1 {
		t.Errorf("ListSessions(ended) after the backfill = %d, %v; want 1", len(got), err)
	}
	if n, err := s.BackfillListKeys(ctx); err != nil || n != 0 {
		t.Errorf("a second BackfillListKeys = %d, %v; want 0", n, err)
	}
}
