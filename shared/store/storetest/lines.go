package storetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/assistant"
	"github.com/bridgeline/bridgeline/shared/line"
	"github.com/bridgeline/bridgeline/shared/listing"
	"github.com/bridgeline/bridgeline/shared/platform/sim"
)

func services(s Store) (*assistant.Service, *line.Service) {
	return &assistant.Service{Store: s, Models: []string{"llama3.1:8b"}, Now: time.Now}, &line.Service{Store: s, Assistants: s, Now: time.Now}
}

var lineCases = map[string]func(*testing.T, Store){
	"default variables are stored, replaced and cleared": lineVariables,
	"a handle is provisioned once and found by handle": func(t *testing.T, s Store) {
		acct, _ := newAccount(t, s)
		_, lines := services(s)
		l, err := lines.Provision(ctx(t), acct.ID, sim.Name, "+15550100001", "Front desk")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := lines.Provision(ctx(t), acct.ID, sim.Name, "+15550100001", "again"); !apierr.Is(err, apierr.CodeConflict) {
			t.Errorf("Provision(dup) err = %v, want conflict", err)
		}
		got, err := s.LineByHandle(ctx(t), sim.Name, "+15550100001")
		if err != nil || got.ID != l.ID {
			t.Errorf("LineByHandle = %v, %v; want %s", got.ID, err, l.ID)
		}
		if _, err := s.LineByHandle(ctx(t), sim.Name, "+15550100009"); !errors.Is(err, apierr.ErrNotFound) {
			t.Errorf("LineByHandle(unknown) err = %v, want ErrNotFound", err)
		}
		list, err := s.ListLines(ctx(t), acct.ID, listing.Query{Limit: 10})
		if err != nil || len(list) != 1 {
			t.Errorf("ListLines = %d lines, %v; want 1", len(list), err)
		}
	},
	"the first line is the oldest, in one read": func(t *testing.T, s Store) {
		acct, _ := newAccount(t, s)
		_, lines := services(s)
		if _, err := s.FirstLine(ctx(t), acct.ID); !errors.Is(err, apierr.ErrNotFound) {
			t.Errorf("FirstLine(no lines) err = %v, want ErrNotFound", err)
		}
		var first line.Line
		for i := range 3 {
			l, err := lines.Provision(ctx(t), acct.ID, sim.Name, fmt.Sprintf("+1555010%04d", 100+i), "")
			if err != nil {
				t.Fatal(err)
			}
			if i == 0 {
				first = l
			}
		}
		// Another account's older line is not this account's.
		other, _ := newAccount(t, s)
		if _, err := lines.Provision(ctx(t), other.ID, sim.Name, "+15550100999", ""); err != nil {
			t.Fatal(err)
		}
		got, err := s.FirstLine(ctx(t), acct.ID)
		if err != nil || got.ID != first.ID {
			t.Errorf("FirstLine = %s, %v; want the oldest %s", got.ID, err, first.ID)
		}
	},
	"assignment needs a published active assistant and blocks archive": func(t *testing.T, s Store) {
		acct, _ := newAccount(t, s)
		assistants, lines := services(s)
		l, _ := lines.Provision(ctx(t), acct.ID, sim.Name, "+15550100002", "")
		a, _ := assistants.Create(ctx(t), acct.ID, completeFields("Ada"))
		if _, err := lines.Assign(ctx(t), acct.ID, l.ID, a.ID); !apierr.Is(err, apierr.CodeAssistantNotPublished) {
			t.Fatalf("Assign(unpublished) err = %v, want assistant_not_published", err)
		}
		if _, err := assistants.Publish(ctx(t), acct.ID, a.ID); err != nil {
			t.Fatal(err)
		}
		got, err := lines.Assign(ctx(t), acct.ID, l.ID, a.ID)
		if err != nil || got.AssistantID != a.ID {
			t.Fatalf("Assign = %+v, %v", got, err)
		}
		if _, err := assistants.Archive(ctx(t), acct.ID, a.ID); !apierr.Is(err, apierr.CodeAssistantInUse) {
			t.Fatalf("Archive(assigned) err = %v, want assistant_in_use", err)
		}
		if _, err := lines.Update(ctx(t), acct.ID, l.ID, line.Update{UnassignAssistant: true}); err != nil {
			t.Fatal(err)
		}
		archived, err := assistants.Archive(ctx(t), acct.ID, a.ID)
		if err != nil || archived.Status != assistant.StatusArchived {
			t.Fatalf("Archive(unassigned) = %v, %v", archived.Status, err)
		}
		if _, err := lines.Assign(ctx(t), acct.ID, l.ID, a.ID); !apierr.Is(err, apierr.CodeAssistantArchived) {
			t.Errorf("Assign(archived) err = %v, want assistant_archived", err)
		}
	},
	"concurrent assign and archive never both win": func(t *testing.T, s Store) {
		acct, _ := newAccount(t, s)
		assistants, lines := services(s)
		for round := range 4 {
			l, _ := lines.Provision(ctx(t), acct.ID, sim.Name, "+1555020000"+string(rune('0'+round)), "")
			a, _ := assistants.Create(ctx(t), acct.ID, completeFields("Ada"))
			if _, err := assistants.Publish(ctx(t), acct.ID, a.ID); err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			var assignErr, archiveErr error
			wg.Add(2)
			go func() { defer wg.Done(); _, assignErr = lines.Assign(ctx(t), acct.ID, l.ID, a.ID) }()
			go func() { defer wg.Done(); _, archiveErr = assistants.Archive(ctx(t), acct.ID, a.ID) }()
			wg.Wait()
			if (assignErr == nil) == (archiveErr == nil) {
				t.Fatalf("round %d: assign err %v, archive err %v: exactly one must win", round, assignErr, archiveErr)
			}
			got, _ := s.GetAssistant(ctx(t), a.ID)
			gotLine, _ := s.GetLine(ctx(t), l.ID)
			if (gotLine.AssistantID == a.ID) != (got.AssignedLines == 1) || (got.Status == assistant.StatusArchived && got.AssignedLines != 0) {
				t.Fatalf("round %d: line assistant %q, assistant status %s assigned %d", round, gotLine.AssistantID, got.Status, got.AssignedLines)
			}
		}
	},
	"reassigning moves the count between assistants": func(t *testing.T, s Store) {
		acct, _ := newAccount(t, s)
		assistants, lines := services(s)
		l, _ := lines.Provision(ctx(t), acct.ID, sim.Name, "+15550100003", "")
		a, _ := assistants.Create(ctx(t), acct.ID, completeFields("A"))
		b, _ := assistants.Create(ctx(t), acct.ID, completeFields("B"))
		assistants.Publish(ctx(t), acct.ID, a.ID)
		assistants.Publish(ctx(t), acct.ID, b.ID)
		if _, err := lines.Assign(ctx(t), acct.ID, l.ID, a.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := lines.Assign(ctx(t), acct.ID, l.ID, b.ID); err != nil {
			t.Fatal(err)
		}
		ga, _ := s.GetAssistant(ctx(t), a.ID)
		gb, _ := s.GetAssistant(ctx(t), b.ID)
		if ga.AssignedLines != 0 || gb.AssignedLines != 1 {
			t.Errorf("assigned lines a=%d b=%d, want 0 and 1", ga.AssignedLines, gb.AssignedLines)
		}
	},
	"a stale line update conflicts": func(t *testing.T, s Store) {
		acct, _ := newAccount(t, s)
		_, lines := services(s)
		l, _ := lines.Provision(ctx(t), acct.ID, sim.Name, "+15550100004", "")
		fresh := l
		fresh.Name = "fresh"
		if err := s.UpdateLine(ctx(t), fresh, nil); err != nil {
			t.Fatal(err)
		}
		stale := l
		stale.Name = "stale"
		if err := s.UpdateLine(ctx(t), stale, nil); !errors.Is(err, apierr.ErrConflict) {
			t.Errorf("UpdateLine(stale) err = %v, want ErrConflict", err)
		}
		got, _ := s.GetLine(ctx(t), l.ID)
		if got.Name != "fresh" {
			t.Errorf("name = %q, want fresh", got.Name)
		}
	},
}
