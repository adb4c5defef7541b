package lktoken_test

import (
	"errors"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/livekit/protocol/auth"

	"github.com/bridgeline/bridgeline/shared/lktoken"
)

const (
	apiKey = "devkey"
	secret = "a-secret-of-at-least-thirty-two-characters"
)

func yes() *bool { b := true; return &b }

// A token minted here reads the same through LiveKit's own verifier.
func TestMintedTokenVerifiesWithLiveKitAuth(t *testing.T) {
	now := time.Now()
	tok, err := lktoken.Sign(apiKey, secret, lktoken.Claims{
		RegisteredClaims: jwt.RegisteredClaims{Subject: "client-1"},
		Name:             "Client",
		Video:            &lktoken.VideoGrant{RoomJoin: true, Room: "ses_1", CanPublish: yes(), CanSubscribe: yes(), CanPublishData: yes()},
	}, now, 10*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	v, err := auth.ParseAPIToken(tok)
	if err != nil {
		t.Fatal(err)
	}
	reg, grants, err := v.Verify(secret)
	if err != nil {
		t.Fatalf("LiveKit Verify: %v", err)
	}
	if v.APIKey() != apiKey || grants.Identity != "client-1" || grants.Name != "Client" {
		t.Errorf("key %q identity %q name %q", v.APIKey(), grants.Identity, grants.Name)
	}
	g := grants.Video
	if !g.RoomJoin || g.Room != "ses_1" || !g.GetCanPublish() || !g.GetCanSubscribe() || !g.GetCanPublishData() || g.RoomCreate || g.RoomAdmin || g.RoomList {
		t.Errorf("video grant = %+v", g)
	}
	if got := reg.ExpiresAt.Time; got.Sub(now.Add(10*time.Minute)).Abs() > time.Second {
		t.Errorf("exp = %v, want now+10m", got)
	}
}

// A body LiveKit signs (as its webhooks are signed) verifies here; altered bodies,
// unknown keys, wrong secrets and expired tokens do not.
func TestVerifyBodyAgainstLiveKitSignedTokens(t *testing.T) {
	body := []byte(`{"event":"room_finished","room":{"name":"ses_1"}}`)
	at := auth.NewAccessToken(apiKey, secret).SetValidFor(5 * time.Minute)
	at.SetSha256(lktoken.BodyHash(body))
	tok, err := at.ToJWT()
	if err != nil {
		t.Fatal(err)
	}
	keys := lktoken.KeyPair(apiKey, secret)
	if _, err := lktoken.VerifyBody(tok, body, keys); err != nil {
		t.Fatalf("VerifyBody(LiveKit-signed) = %v", err)
	}
	if _, err := lktoken.VerifyBody("Bearer "+tok, body, keys); err != nil {
		t.Errorf("VerifyBody(Bearer ...) = %v", err)
	}
	expired, _ := lktoken.SignBody(apiKey, secret, "", body, time.Now().Add(-time.Hour))
	mint, _ := lktoken.SignBody(apiKey, secret, "worker", body, time.Now())
	noHash, _ := lktoken.Sign(apiKey, secret, lktoken.Claims{}, time.Now(), time.Minute)
	for _, tc := range []struct {
		name  string
		token string
		body  []byte
		keys  lktoken.Keys
		want  error
	}{
		{"altered body", tok, []byte(`{"event":"room_started"}`), keys, lktoken.ErrBodyHash},
		{"unknown key", tok, body, lktoken.KeyPair("otherkey", secret), lktoken.ErrUnknownKey},
		{"wrong secret", tok, body, lktoken.KeyPair(apiKey, secret+"x"), lktoken.ErrInvalid},
		{"expired", expired, body, keys, lktoken.ErrInvalid},
		{"no hash claim", noHash, body, keys, lktoken.ErrBodyMissing},
		{"no token", "", body, keys, lktoken.ErrMissing},
		{"garbage", "not.a.jwt", body, keys, lktoken.ErrInvalid},
	} {
		if _, err := lktoken.VerifyBody(tc.token, tc.body, tc.keys); !errors.Is(err, tc.want) {
			t.Errorf("%s: VerifyBody err = %v, want %v", tc.name, err, tc.want)
		}
	}
	c, err := lktoken.VerifyBody(mint, body, keys)
	if err != nil || c.Subject != "worker" {
		t.Errorf("VerifyBody(SignBody) = %+v, %v", c, err)
	}
}

// A token signed with another algorithm is refused even with the right secret.
func TestVerifyRefusesOtherAlgorithms(t *testing.T) {
	claims := lktoken.Claims{RegisteredClaims: jwt.RegisteredClaims{Issuer: apiKey, ExpiresAt: jwt.NewNumericDate(time.Now().Add(time.Minute))}}
	tok, err := jwt.NewWithClaims(jwt.SigningMethodHS512, claims).SignedString([]byte(secret))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lktoken.Verify(tok, lktoken.KeyPair(apiKey, secret)); !errors.Is(err, lktoken.ErrInvalid) {
		t.Errorf("Verify(HS512) err = %v, want ErrInvalid", err)
	}
	none, _ := jwt.NewWithClaims(jwt.SigningMethodNone, claims).SignedString(jwt.UnsafeAllowNoneSignatureType)
	if _, err := lktoken.Verify(none, lktoken.KeyPair(apiKey, secret)); !errors.Is(err, lktoken.ErrInvalid) {
		t.Errorf("Verify(alg none) err = %v, want ErrInvalid", err)
	}
}
