package contract_test

import (
	"bytes"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"testing"

	"github.com/bridgeline/bridgeline/e2e/harness"
	"github.com/bridgeline/bridgeline/shared/avatars/avatartest"
)

// uploadAvatar uploads the test character sheet as an avatar of key's account and
// returns its id.
func uploadAvatar(t *testing.T, s *harness.Stack, key string) string {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	mw.WriteField("sheet", string(avatartest.JSON(avatartest.Manifest())))
	for name, f := range avatartest.Files() {
		w, _ := mw.CreateFormFile(name, name+".png")
		w.Write(f)
	}
	mw.Close()
	req, err := http.NewRequest("POST", s.URL+"/v1/avatars", &body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out struct{ ID string }
	if resp.StatusCode != 201 || json.Unmarshal(raw, &out) != nil || out.ID == "" {
		t.Fatalf("POST /v1/avatars = %d %s", resp.StatusCode, raw)
	}
	return out.ID
}
