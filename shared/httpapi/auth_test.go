package httpapi_test

import (
	"context"
	"encoding/base64"
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
	s, accts, api, acct, testKey := newAuthEnv(t)
	liveKey, _, err := accts.AddKey(ctx, acct.ID, true)
	if err != nil {
		t.Fatal(err)
	}
	var got account.Caller
	record := recordCaller(&got)
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

// TestKeyInTheAuthorizationHeader: the forms a key arrives in. Bearer and HTTP Basic with
// the key as the user name (`curl -u sk_...:`) authenticate, locally and through the
// authorizer; a bare key or an empty Basic user is 401 api_key_missing saying how to send
// it, and on AWS that 401 comes from the function with the same message.
func TestKeyInTheAuthorizationHeader(t *testing.T) {
	ctx := context.Background()
	s, _, api, acct, key := newAuthEnv(t)
	var got account.Caller
	record := recordCaller(&got)
	basic := func(userpass string) string { return "Basic " + base64.StdEncoding.EncodeToString([]byte(userpass)) }
	authorize := httpapi.AuthorizerHandler(s)
	for _, tc := range []struct {
		name, header string
		code, says   string // "" code: authenticated
	}{
		{"bearer", "Bearer " + key, "", ""},
		{"bearer, lower case", "bearer " + key, "", ""},
		{"basic, key as user", basic(key + ":"), "", ""},
		{"basic, key as user with a password", basic(key + ":x"), "", ""},
		{"bare key", key, "api_key_missing", "use `Authorization: Bearer sk_...`"},
		{"basic, key as password", basic(":" + key), "api_key_missing", "the key is the user name"},
		{"basic, not base64", "Basic !!!", "api_key_missing", "not base64"},
		{"other scheme", "Token " + key, "api_key_missing", "use `Authorization: Bearer sk_...`"},
		{"basic, unknown key", basic("sk_test_0000000000000000000000000000:"), "api_key_invalid", "invalid API key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got = account.Caller{}
			req := httptest.NewRequest(http.MethodGet, "/v1/lines", nil)
			req.Header.Set("Authorization", tc.header)
			w := httptest.NewRecorder()
			api.KeyAuth(record).ServeHTTP(w, req)
			checkAuth(t, "KeyAuth", w.Code, w.Body.String(), got, acct.ID, tc.code, tc.says)

			allow, err := authorize(ctx, events.APIGatewayV2CustomAuthorizerV2Request{
				Headers: map[string]string{"authorization": tc.header}})
			if err != nil {
				t.Fatal(err)
			}
			if tc.code == "api_key_invalid" {
				if allow.IsAuthorized {
					t.Errorf("authorizer allowed an unknown key: %+v", allow)
				}
				return
			}
			if !allow.IsAuthorized {
				t.Fatalf("authorizer denied %q; the function must answer it", tc.header)
			}
			got = account.Caller{}
			res, err := httpadapter.NewV2(api.LambdaAuth(record)).ProxyWithContext(ctx, events.APIGatewayV2HTTPRequest{RawPath: "/v1/lines",
				Headers: map[string]string{"authorization": tc.header},
				RequestContext: events.APIGatewayV2HTTPRequestContext{
					HTTP:       events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: http.MethodGet, Path: "/v1/lines"},
					Authorizer: &events.APIGatewayV2HTTPRequestContextAuthorizerDescription{Lambda: allow.Context}}})
			if err != nil {
				t.Fatal(err)
			}
			checkAuth(t, "LambdaAuth", res.StatusCode, res.Body, got, acct.ID, tc.code, tc.says)
		})
	}
}

func checkAuth(t *testing.T, who string, status int, body string, got account.Caller, acctID, code, says string) {
	t.Helper()
	if code == "" {
		if status != http.StatusNoContent || got.ID != acctID {
			t.Errorf("%s: %d %s, caller %q; want the account", who, status, body, got.ID)
		}
		return
	}
	if status != http.StatusUnauthorized || !strings.Contains(body, `"code":"`+code+`"`) || !strings.Contains(body, says) {
		t.Errorf("%s: %d %s; want 401 %s saying %q", who, status, body, code, says)
	}
	if got.ID != "" {
		t.Errorf("%s: authenticated %q on a refused header", who, got.ID)
	}
}

// newAuthEnv is a store with one account and its test key, and the API over it.
func newAuthEnv(t *testing.T) (*sqlite.Store, *account.Service, *httpapi.API, account.Account, string) {
	t.Helper()
	s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "auth.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	accts := &account.Service{Store: s, Now: time.Now}
	acct, key, err := accts.Create(context.Background(), "Acme", false)
	if err != nil {
		t.Fatal(err)
	}
	api, err := httpapi.New(s, s, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s, accts, api, acct, key
}

// recordCaller is a handler that keeps the caller a request was authenticated as.
func recordCaller(got *account.Caller) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		*got = httpapi.AccountFrom(r.Context())
		w.WriteHeader(http.StatusNoContent)
	})
}
