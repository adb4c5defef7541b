package contract_test

import (
	"bytes"
	"encoding/json"
	"mime/multipart"
	"net/http"
	"testing"

	"github.com/bridgeline/bridgeline/e2e/harness"
	"github.com/bridgeline/bridgeline/shared/avatars/avatartest"
)

// avatarSheet is the test character sheet as a POST /v1/avatars body, with its content
// type.
func avatarSheet() (body, contentType string) {
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	mw.WriteField("sheet", string(avatartest.JSON(avatartest.Manifest())))
	for name, f := range avatartest.Files() {
		w, _ := mw.CreateFormFile(name, name+".png")
		w.Write(f)
	}
	mw.Close()
	return b.String(), mw.FormDataContentType()
}

// uploadAvatar uploads the test character sheet as an avatar of key's account and
// returns its id.
func uploadAvatar(t *testing.T, s *harness.Stack, key string) string {
	t.Helper()
	body, ctype := avatarSheet()
	status, raw, _ := requestAs(t, s, key, http.MethodPost, "/v1/avatars", ctype, body, "")
	var out struct{ ID string }
	if status != 201 || json.Unmarshal(raw, &out) != nil || out.ID == "" {
		t.Fatalf("POST /v1/avatars = %d %s", status, raw)
	}
	return out.ID
}
