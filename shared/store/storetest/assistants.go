package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/assistant"
	"github.com/bridgeline/bridgeline/shared/listing"
	"github.com/bridgeline/bridgeline/shared/persona"
)

func completeFields(name string) assistant.Fields {
	return assistant.Fields{
		Name: ptr(name), SystemPrompt: ptr("You are helpful."), Greeting: ptr("Hello there."),
		AvatarID: ptr("ava_maya"), Framing: &persona.Framing{Shot: persona.ShotCloseUp, Position: persona.PositionLeft},
	}
}

var assistantCases = map[string]func(*testing.T, Store){
	"call settings (tools, idle timeout, maximum duration) and recording go from the draft into each version; the tool secret is kept and rotates": callSettings,
	"the head is the assistant without its versions; a call runs the active version": func(t *testing.T, s Store) {
		acct, _ := newAccount(t, s)
		svc := assistant.Service{Store: s, Now: time.Now}
		a, err := svc.Create(ctx(t), acct.ID, completeFields("Ada"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := assistant.CallVersion(ctx(t), s, acct.ID, a.ID, ""); !apierr.Is(err, apierr.CodeAssistantNotPublished) {
			t.Errorf("CallVersion before any publish = %v, want assistant_not_published", err)
		}
		for range 3 {
			if a, err = svc.Publish(ctx(t), acct.ID, a.ID); err != nil {
				t.Fatal(err)
			}
		}
		full, err := s.GetAssistant(ctx(t), a.ID)
		if err != nil {
			t.Fatal(err)
		}
		if a, err = svc.Activate(ctx(t), acct.ID, a.ID, full.Versions[0].ID); err != nil {
			t.Fatal(err)
		}
		head, err := s.GetAssistantHead(ctx(t), a.ID)
		if err != nil || head.Versions != nil || head.ActiveVersionID != full.Versions[0].ID || head.VersionCount != 3 ||
			head.Revision != a.Revision || head.Name != "Ada" {
			t.Fatalf("GetAssistantHead = %+v, %v; want Ada without versions, revision %d, version 1 active of 3", head, err, a.Revision)
		}
		v, err := assistant.CallVersion(ctx(t), s, acct.ID, a.ID, "")
		if err != nil || v.ID != full.Versions[0].ID || v.Number != 1 || v.AssistantID != a.ID {
			t.Errorf("CallVersion = %+v, %v; want version 1, the one activated", v, err)
		}
		if _, err := assistant.CallVersion(ctx(t), s, "acct_other", a.ID, ""); !apierr.Is(err, apierr.CodeResourceNotFound) {
			t.Errorf("CallVersion for another account = %v, want resource_not_found", err)
		}
		if _, err := s.GetAssistantHead(ctx(t), "asst_nope"); !errors.Is(err, apierr.ErrNotFound) {
			t.Errorf("GetAssistantHead(unknown) = %v, want ErrNotFound", err)
		}
	},
	"a version lists its placeholder names; malformed ones are refused": versionVariables,
	"voice and model go from the draft into each version, and GetVersion reads them": func(t *testing.T, s Store) {
		acct, _ := newAccount(t, s)
		svc := assistant.Service{Store: s, HostedVoices: []string{"nova"}, Models: []string{"llama3.1:8b"}, Now: time.Now}
		f := completeFields("Ada")
		f.Voice, f.Model = ptr("hosted-nova"), ptr("llama3.1:8b")
		a, err := svc.Create(ctx(t), acct.ID, f)
		if err != nil {
			t.Fatal(err)
		}
		if a, err = svc.Publish(ctx(t), acct.ID, a.ID); err != nil {
			t.Fatal(err)
		}
		if a, err = svc.Update(ctx(t), acct.ID, a.ID, assistant.Fields{Voice: ptr("flite-awb"), Model: ptr("")}); err != nil {
			t.Fatal(err)
		}
		if a, err = svc.Publish(ctx(t), acct.ID, a.ID); err != nil {
			t.Fatal(err)
		}
		got, err := s.GetAssistant(ctx(t), a.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Draft.Voice != "flite-awb" || got.Draft.Model != "" || len(got.Versions) != 2 {
			t.Fatalf("GetAssistant = %+v, want draft voice flite-awb, no model, two versions", got)
		}
		for i, want := range [][2]string{{"hosted-nova", "llama3.1:8b"}, {"flite-awb", ""}} {
			v := got.Versions[i]
			if v.Voice != want[0] || v.Model != want[1] {
				t.Errorf("version %d: voice %q model %q, want %q %q", v.Number, v.Voice, v.Model, want[0], want[1])
			}
			byID, err := s.GetVersion(ctx(t), v.ID)
			if err != nil || byID.Voice != want[0] || byID.Model != want[1] {
				t.Errorf("GetVersion(%s) = %+v, %v; want voice %q model %q", v.ID, byID, err, want[0], want[1])
			}
		}
	},
	"create then get round-trips the draft": func(t *testing.T, s Store) {
		acct, _ := newAccount(t, s)
		svc := assistant.Service{Store: s, Now: time.Now}
		a, err := svc.Create(ctx(t), acct.ID, completeFields("Ada"))
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.GetAssistant(ctx(t), a.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Name != "Ada" || !reflect.DeepEqual(got.Draft, a.Draft) || got.Status != assistant.StatusActive || len(got.Versions) != 0 {
			t.Errorf("GetAssistant = %+v, want %+v", got, a)
		}
		if !got.CreatedAt.Equal(a.CreatedAt) {
			t.Errorf("CreatedAt = %v, want %v", got.CreatedAt, a.CreatedAt)
		}
	},
	"update with a stale revision conflicts and changes nothing": func(t *testing.T, s Store) {
		acct, _ := newAccount(t, s)
		svc := assistant.Service{Store: s, Now: time.Now}
		a, _ := svc.Create(ctx(t), acct.ID, completeFields("Ada"))
		first := a
		first.Name = "First"
		if err := s.UpdateAssistant(ctx(t), first); err != nil {
			t.Fatalf("UpdateAssistant: %v", err)
		}
		stale := a
		stale.Name = "Stale"
		if err := s.UpdateAssistant(ctx(t), stale); !errors.Is(err, apierr.ErrConflict) {
			t.Fatalf("UpdateAssistant(stale) err = %v, want ErrConflict", err)
		}
		got, _ := s.GetAssistant(ctx(t), a.ID)
		if got.Name != "First" || got.Revision != a.Revision+1 {
			t.Errorf("after stale update: name %q revision %d, want First %d", got.Name, got.Revision, a.Revision+1)
		}
	},
	"concurrent publishes take numbers 1..n with no gap or duplicate": func(t *testing.T, s Store) {
		acct, _ := newAccount(t, s)
		svc := assistant.Service{Store: s, Now: time.Now}
		a, _ := svc.Create(ctx(t), acct.ID, completeFields("Ada"))
		const workers, each = 6, 3
		var wg sync.WaitGroup
		errs := make(chan error, workers*each)
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range each {
					if _, err := svc.Publish(ctx(t), acct.ID, a.ID); err != nil {
						errs <- err
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Errorf("Publish: %v", err)
		}
		got, err := s.GetAssistant(ctx(t), a.ID)
		if err != nil {
			t.Fatal(err)
		}
		var nums []int
		for _, v := range got.Versions {
			nums = append(nums, v.Number)
		}
		sort.Ints(nums)
		if len(nums) != workers*each {
			t.Fatalf("got %d versions, want %d", len(nums), workers*each)
		}
		for i, n := range nums {
			if n != i+1 {
				t.Fatalf("version numbers %v, want 1..%d", nums, workers*each)
			}
		}
		last := got.Versions[len(got.Versions)-1]
		if got.ActiveVersionID != last.ID || got.VersionCount != workers*each {
			t.Errorf("active %s count %d, want %s %d", got.ActiveVersionID, got.VersionCount, last.ID, workers*each)
		}
	},
	"a published version never changes": func(t *testing.T, s Store) {
		acct, _ := newAccount(t, s)
		svc := assistant.Service{Store: s, Now: time.Now}
		a, _ := svc.Create(ctx(t), acct.ID, completeFields("Ada"))
		p, err := svc.Publish(ctx(t), acct.ID, a.ID)
		if err != nil {
			t.Fatal(err)
		}
		v1 := p.Versions[0]
		if _, err := svc.Update(ctx(t), acct.ID, a.ID, assistant.Fields{Greeting: ptr("Changed."), Name: ptr("Bea")}); err != nil {
			t.Fatal(err)
		}
		got, err := s.GetVersion(ctx(t), v1.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Greeting != "Hello there." || got.Name != "Ada" || got.Number != 1 {
			t.Errorf("version after draft edit = %+v, want the published snapshot", got)
		}
		// A publish whose number is already taken must fail, not overwrite.
		clash := assistant.Version{ID: "ver_clash", AssistantID: a.ID, Number: 1, Greeting: "x"}
		cur, _ := s.GetAssistant(ctx(t), a.ID)
		if err := s.PublishVersion(ctx(t), cur, clash); !errors.Is(err, apierr.ErrConflict) {
			t.Errorf("PublishVersion(number 1 again) err = %v, want ErrConflict", err)
		}
		after, _ := s.GetAssistant(ctx(t), a.ID)
		if after.Revision != cur.Revision || len(after.Versions) != 1 {
			t.Errorf("failed publish changed the assistant: revision %d->%d versions %d", cur.Revision, after.Revision, len(after.Versions))
		}
	},
	"list is newest first, paginates and filters by status": func(t *testing.T, s Store) {
		acct, _ := newAccount(t, s)
		other, _ := newAccount(t, s)
		svc := assistant.Service{Store: s, Now: time.Now}
		var ids []string
		for i := range 5 {
			a, err := svc.Create(ctx(t), acct.ID, assistant.Fields{Name: ptr(fmt.Sprint("A", i))})
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, a.ID)
		}
		if _, err := svc.Create(ctx(t), other.ID, assistant.Fields{Name: ptr("theirs")}); err != nil {
			t.Fatal(err)
		}
		if _, err := svc.Archive(ctx(t), acct.ID, ids[1]); err != nil {
			t.Fatal(err)
		}
		page := func(status, after string, limit int) []string {
			got, err := svc.List(ctx(t), acct.ID, assistant.ListQuery{Status: status, Query: listing.Query{Limit: limit, StartingAfter: after}})
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, a := range got {
				out = append(out, a.ID)
			}
			return out
		}
		want := []string{ids[4], ids[3], ids[2], ids[0]}
		if got := page("", "", 10); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("list active = %v, want %v", got, want)
		}
		if got := page("", "", 2); fmt.Sprint(got) != fmt.Sprint(want[:3]) {
			t.Errorf("list limit 2 = %v, want %v (limit+1 rows)", got, want[:3])
		}
		if got := page("", ids[3], 10); fmt.Sprint(got) != fmt.Sprint(want[2:]) {
			t.Errorf("list after %s = %v, want %v", ids[3], got, want[2:])
		}
		if got := page("archived", "", 10); fmt.Sprint(got) != fmt.Sprint([]string{ids[1]}) {
			t.Errorf("list archived = %v, want [%s]", got, ids[1])
		}
		if got := page("all", "", 10); len(got) != 5 {
			t.Errorf("list all = %v, want 5 ids", got)
		}
	},
	"unknown ids are not found": func(t *testing.T, s Store) {
		if _, err := s.GetAssistant(ctx(t), "asst_nope"); !errors.Is(err, apierr.ErrNotFound) {
			t.Errorf("GetAssistant err = %v, want ErrNotFound", err)
		}
		if _, err := s.GetVersion(ctx(t), "ver_nope"); !errors.Is(err, apierr.ErrNotFound) {
			t.Errorf("GetVersion err = %v, want ErrNotFound", err)
		}
		if err := s.CreateAssistant(ctx(t), assistant.Assistant{ID: "asst_x", AccountID: "acct_x", Status: "active", Revision: 1}); err != nil {
			t.Fatal(err)
		}
		if err := s.CreateAssistant(ctx(t), assistant.Assistant{ID: "asst_x", AccountID: "acct_x", Status: "active", Revision: 1}); !errors.Is(err, apierr.ErrConflict) {
			t.Errorf("CreateAssistant(dup) err = %v, want ErrConflict", err)
		}
	},
}

func callSettings(t *testing.T, s Store) {
	acct, _ := newAccount(t, s)
	svc := assistant.Service{Store: s, Now: time.Now}
	f := completeFields("Ada")
	tools := []assistant.Tool{{Name: "lookup_order", Description: "Finds an order.", URL: "https://example.com/tools/order",
		Parameters: json.RawMessage(`{"type":"object","properties":{"order_id":{"type":"string"}},"required":["order_id"]}`)}}
	idle, most := 45, 300
	f.Calls = &assistant.CallFields{Tools: &tools, IdleTimeoutSeconds: &idle, MaxDurationSeconds: &most}
	audio := assistant.RecordingAudio
	f.Recording = &audio
	a, err := svc.Create(ctx(t), acct.ID, f)
	if err != nil {
		t.Fatal(err)
	}
	if a.ToolSecret.Secret == "" {
		t.Fatal("a new assistant has no tool secret")
	}
	a, err = svc.Publish(ctx(t), acct.ID, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	v, err := s.GetVersion(ctx(t), a.ActiveVersionID)
	if err != nil {
		t.Fatal(err)
	}
	want := assistant.CallSettings{Tools: tools, IdleTimeoutSeconds: 45, MaxDurationSeconds: &most}
	want.Tools[0].TimeoutMS = assistant.DefaultToolTimeoutMS
	if !reflect.DeepEqual(v.CallSettings, want) {
		t.Errorf("version's call settings = %+v, want %+v", v.CallSettings, want)
	}
	if v.Recording != assistant.RecordingAudio {
		t.Errorf("version's recording = %q, want audio", v.Recording)
	}
	first, err := svc.ToolSigningSecrets(ctx(t), acct.ID, a.ID)
	if err != nil || len(first) != 1 {
		t.Fatalf("ToolSigningSecrets = %v, %v; want the one secret", first, err)
	}
	rotated, err := svc.RotateToolSecret(ctx(t), acct.ID, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	both, err := svc.ToolSigningSecrets(ctx(t), acct.ID, a.ID)
	if err != nil || len(both) != 2 || both[0] != rotated.ToolSecret.Secret || both[1] != first[0] {
		t.Errorf("after rotation ToolSigningSecrets = %v, %v; want the new one, then the old one", both, err)
	}
	if _, err := svc.ToolSigningSecrets(ctx(t), "acct_other", a.ID); !apierr.Is(err, apierr.CodeResourceNotFound) {
		t.Errorf("ToolSigningSecrets for another account = %v, want resource_not_found", err)
	}
	if _, err := svc.ToolSigningSecrets(ctx(t), acct.ID, "asst_nope"); !apierr.Is(err, apierr.CodeResourceNotFound) {
		t.Errorf("ToolSigningSecrets of an unknown assistant = %v, want resource_not_found", err)
	}
}
