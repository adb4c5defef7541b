package storetest

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/shared/idempotency"
)

func record(key, hash string, now time.Time) idempotency.Record {
	return idempotency.Record{AccountID: "acct_1", Key: key, RequestHash: hash, CreatedAt: now, ExpiresAt: now.Add(idempotency.Retention)}
}

var idempotencyCases = map[string]func(*testing.T, Store){
	"a response larger than one DynamoDB item is replayed whole": func(t *testing.T, s Store) {
		// 2 MiB of random bytes (incompressible), more than the largest response an
		// idempotent route writes (an assistant at the field limits, about 1.5 MB), and a
		// compressible one.
		random := make([]byte, 2<<20)
		rand.Read(random)
		text := bytes.Repeat([]byte(`{"system_prompt":"\u0001\u0002"}`), 60000)
		for i, body := range [][]byte{random, text} {
			now := time.Now().UTC().Truncate(time.Millisecond)
			key := fmt.Sprintf("big%d", i)
			if _, ok, err := s.BeginIdempotent(ctx(t), record(key, "h1", now), now); err != nil || !ok {
				t.Fatalf("Begin = %v, %v; want inserted", ok, err)
			}
			if err := s.CompleteIdempotent(ctx(t), "acct_1", key, 201, body); err != nil {
				t.Fatalf("Complete(%d bytes) = %v", len(body), err)
			}
			got, ok, err := s.BeginIdempotent(ctx(t), record(key, "h1", now), now)
			if err != nil || ok || got.Status != 201 || !bytes.Equal(got.Body, body) {
				t.Errorf("Begin(after complete of %d bytes) = status %d, %d bytes, %v, %v; want the stored 201 and body",
					len(body), got.Status, len(got.Body), ok, err)
			}
		}
	},
	"the first request claims the key, later ones see it": func(t *testing.T, s Store) {
		now := time.Now().UTC().Truncate(time.Millisecond)
		if _, ok, err := s.BeginIdempotent(ctx(t), record("k1", "h1", now), now); err != nil || !ok {
			t.Fatalf("Begin = %v, %v; want inserted", ok, err)
		}
		got, ok, err := s.BeginIdempotent(ctx(t), record("k1", "h2", now), now)
		if err != nil || ok || got.RequestHash != "h1" || got.Status != 0 {
			t.Fatalf("Begin(again) = %+v, %v, %v; want the in-flight h1 record", got, ok, err)
		}
		if err := s.CompleteIdempotent(ctx(t), "acct_1", "k1", 201, []byte(`{"id":"x"}`)); err != nil {
			t.Fatal(err)
		}
		got, ok, _ = s.BeginIdempotent(ctx(t), record("k1", "h1", now), now.Add(time.Hour))
		if ok || got.Status != 201 || string(got.Body) != `{"id":"x"}` {
			t.Errorf("Begin(after complete) = %+v, %v; want the stored 201", got, ok)
		}
		// Another account's key of the same text is separate.
		other := record("k1", "h1", now)
		other.AccountID = "acct_2"
		if _, ok, _ := s.BeginIdempotent(ctx(t), other, now); !ok {
			t.Error("Begin(other account) did not insert")
		}
	},
	"expired and abandoned records are replaced, released ones are gone": func(t *testing.T, s Store) {
		now := time.Now().UTC().Truncate(time.Millisecond)
		s.BeginIdempotent(ctx(t), record("done", "h1", now), now)
		s.CompleteIdempotent(ctx(t), "acct_1", "done", 200, []byte(`{}`))
		if _, ok, _ := s.BeginIdempotent(ctx(t), record("done", "h2", now), now.Add(25*time.Hour)); !ok {
			t.Error("Begin after 25h did not replace the expired record")
		}
		s.BeginIdempotent(ctx(t), record("stuck", "h1", now), now)
		if _, ok, _ := s.BeginIdempotent(ctx(t), record("stuck", "h1", now), now.Add(time.Second)); ok {
			t.Error("Begin replaced an in-flight record after 1s")
		}
		if _, ok, _ := s.BeginIdempotent(ctx(t), record("stuck", "h1", now), now.Add(idempotency.LockTimeout+time.Second)); !ok {
			t.Error("Begin did not replace an abandoned in-flight record")
		}
		s.BeginIdempotent(ctx(t), record("rel", "h1", now), now)
		if err := s.ReleaseIdempotent(ctx(t), "acct_1", "rel"); err != nil {
			t.Fatal(err)
		}
		if _, ok, _ := s.BeginIdempotent(ctx(t), record("rel", "h1", now), now); !ok {
			t.Error("Begin after Release did not insert")
		}
	},
}
