package httpapi_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"github.com/bridgeline/bridgeline/shared/account"
	"github.com/bridgeline/bridgeline/shared/httpapi"
	"github.com/bridgeline/bridgeline/shared/store/sqlite"
)

// TestKeyModeOnTheCaller: the account a request is authenticated as carries its key's
// mode, found once from the key: by KeyAuth on the local stack, and on AWS by the
// authorizer, whose context LambdaAuth reads. No handler looks at the header again.
func TestKeyModeOnTheCaller(t *testing.T) {
	ctx := context.Background()
	s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "auth.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	accts := &account.Service{Store: s, Now: time.Now}
	acct, testKey, err := accts.Create(ctx, "Acme", false)
	if err != nil {
		t.Fatal(err)
	}
	liveKey, _, err := accts.AddKey(ctx, acct.ID, true)
	if err != nil {
		t.Fatal(err)
	}
	api, err := httpapi.New(s, s, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got account.Caller
	record := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = httpapi.AccountFrom(r.Context())
		w.WriteHeader(http.StatusNoContent)
	})
	authorize := httpapi.AuthorizerHandler(s)
	for _, tc := range []struct {
		name, key string
		live      bool
	}{
		{"test key", testKey, false},
		{"live key", liveKey, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got = account.Caller{}
			req := httptest.NewRequest(http.MethodGet, "/v1/lines", nil)
			req.Header.Set("Authorization", "Bearer "+tc.key)
			api.KeyAuth(record).ServeHTTP(httptest.NewRecorder(), req)
			if got.ID != acct.ID || got.Live != tc.live || !strings.HasPrefix(got.KeyID, "key_") {
				t.Errorf("KeyAuth: caller %s, live %v, key %q; want %s, %v, a key id", got.ID, got.Live, got.KeyID, acct.ID, tc.live)
			}
			keyID := got.KeyID

			allow, err := authorize(ctx, events.APIGatewayV2CustomAuthorizerV2Request{
				Headers: map[string]string{"authorization": "Bearer " + tc.key}})
			if err != nil || !allow.IsAuthorized {
				t.Fatalf("authorizer = %+v, %v; want allowed", allow, err)
			}
			got = account.Caller{}
			fn := httpadapter.NewV2(api.LambdaAuth(record))
			// The header is another key's: the function must take the mode from the
			// authorizer's context, not from the header.
			other := map[bool]string{true: testKey, false: liveKey}[tc.live]
			if _, err := fn.ProxyWithContext(ctx, events.APIGatewayV2HTTPRequest{RawPath: "/v1/lines",
				Headers: map[string]string{"authorization": "Bearer " + other},
				RequestContext: events.APIGatewayV2HTTPRequestContext{
					HTTP:       events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: http.MethodGet, Path: "/v1/lines"},
					Authorizer: &events.APIGatewayV2HTTPRequestContextAuthorizerDescription{Lambda: allow.Context}}}); err != nil {
				t.Fatal(err)
			}
			if got.ID != acct.ID || got.Live != tc.live || got.KeyID != keyID {
				t.Errorf("LambdaAuth: caller %s, live %v, key %q; want %s, %v, %q", got.ID, got.Live, got.KeyID, acct.ID, tc.live, keyID)
			}
		})
	}
}
