package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/shared/account"
	"github.com/bridgeline/bridgeline/shared/avatars"
	"github.com/bridgeline/bridgeline/shared/avatars/avatartest"
	"github.com/bridgeline/bridgeline/shared/store/sqlite"
)

// testFolders are the asset folders of the test stacks, by store, so a test can serve
// the preview URLs the API signed.
var (
	testFoldersMu sync.Mutex
	testFolders   = map[*sqlite.Store]*avatars.Folder{}
)

func folderOf(s *sqlite.Store) *avatars.Folder {
	testFoldersMu.Lock()
	defer testFoldersMu.Unlock()
	return testFolders[s]
}

// testAvatars is the avatar service of a test stack: its files in a temporary folder.
func testAvatars(tb testing.TB, s *sqlite.Store) *avatars.Service {
	f := &avatars.Folder{Dir: tb.TempDir(), BaseURL: "http://assets.invalid", Secret: bytes.Repeat([]byte("k"), 32)}
	testFoldersMu.Lock()
	testFolders[s] = f
	testFoldersMu.Unlock()
	return &avatars.Service{Store: s, Assets: f, Assistants: s, Now: time.Now}
}

// upload posts a character sheet: the manifest and the files by part name.
func (e *env) upload(manifest map[string]any, files map[string][]byte) resp {
	e.t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	if manifest != nil {
		mw.WriteField("sheet", string(avatartest.JSON(manifest)))
	}
	for name, b := range files {
		w, _ := mw.CreateFormFile(name, name+".png")
		w.Write(b)
	}
	mw.Close()
	return e.doBytes("POST", "/v1/avatars", body.Bytes(), "Content-Type", mw.FormDataContentType())
}

func (e *env) doBytes(method, path string, body []byte, headers ...string) resp {
	e.t.Helper()
	req, _ := http.NewRequest(method, e.srv.URL+path, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+e.key)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	out := resp{status: res.StatusCode, header: res.Header, raw: string(raw)}
	json.Unmarshal(raw, &out.body)
	return out
}

// The whole life of an own avatar: upload, list beside the built-ins, read with preview
// URLs that serve the uploaded bytes, use in an assistant, refuse the delete while a
// published version uses it.
func TestOwnAvatarLifecycle(t *testing.T) {
	e := newEnv(t, nil)
	files := avatartest.Files()
	r := e.upload(avatartest.Manifest(), files)
	if r.status != 201 {
		t.Fatalf("POST /v1/avatars = %d %s", r.status, r.raw)
	}
	id, _ := r.body["id"].(string)
	if !avatars.IsCustomID(id) || r.body["kind"] != "custom" || r.body["name"] != "Test mascot" {
		t.Fatalf("created %s", r.raw)
	}
	if parts, _ := r.body["parts"].([]any); len(parts) != len(files) {
		t.Errorf("created avatar has %d parts, want %d", len(parts), len(files))
	}

	list := e.do("GET", "/v1/avatars", "")
	data, _ := list.body["data"].([]any)
	if len(data) != 4 || data[3].(map[string]any)["id"] != id || data[0].(map[string]any)["kind"] != "built_in" {
		t.Errorf("GET /v1/avatars: %s; want the 3 built-ins then %s", list.raw, id)
	}

	got := e.do("GET", "/v1/avatars/"+id, "")
	if got.status != 200 || got.header.Get("Cache-Control") != "no-store" || got.body["previews_expire_at"] == nil {
		t.Fatalf("GET /v1/avatars/%s = %d %s", id, got.status, got.raw)
	}
	folder := folderOf(e.store)
	for _, p := range got.body["parts"].([]any) {
		part := p.(map[string]any)
		name, _ := part["name"].(string)
		u, err := url.Parse(part["preview_url"].(string))
		if err != nil || !strings.Contains(u.Path, "/avatars/"+e.acctID+"/"+id+"/") {
			t.Fatalf("part %s preview_url %v: want one under the account's and avatar's key", name, part["preview_url"])
		}
		rec := httptest.NewRecorder()
		folder.Handler().ServeHTTP(rec, httptest.NewRequest("GET", u.RequestURI(), nil))
		if rec.Code != 200 || !bytes.Equal(rec.Body.Bytes(), files[name]) || rec.Header().Get("Content-Type") != "image/png" {
			t.Errorf("preview of %s: %d, %d bytes (%s); want the %d uploaded", name, rec.Code, rec.Body.Len(), rec.Header().Get("Content-Type"), len(files[name]))
		}
		// A tampered URL is refused.
		q := u.Query()
		q.Set("expires", fmt.Sprint(time.Now().Add(time.Hour).Unix()))
		rec = httptest.NewRecorder()
		folder.Handler().ServeHTTP(rec, httptest.NewRequest("GET", u.Path+"?"+q.Encode(), nil))
		if rec.Code != 403 {
			t.Errorf("a preview URL with its expiry changed: %d, want 403", rec.Code)
		}
	}

	// An assistant may name it, and publish with it.
	a := e.do("POST", "/v1/assistants", fmt.Sprintf(`{"name":"Mascot line","system_prompt":"Be brief.","greeting":"Hi!","avatar_id":%q}`, id))
	if a.status != 201 {
		t.Fatalf("create assistant with own avatar = %d %s", a.status, a.raw)
	}
	asstID := a.body["id"].(string)
	// Before any version is published, deleting would be allowed; publish first.
	if p := e.do("POST", "/v1/assistants/"+asstID+"/publish", ""); p.status != 201 {
		t.Fatalf("publish = %d %s", p.status, p.raw)
	}
	d := e.do("DELETE", "/v1/avatars/"+id, "")
	if d.status != 409 || errCode(d) != "avatar_in_use" {
		t.Fatalf("DELETE of a used avatar = %d %s; want 409 avatar_in_use", d.status, d.raw)
	}
	// Moving the draft to another avatar does not free it: the published version keeps it.
	e.do("PATCH", "/v1/assistants/"+asstID, `{"avatar_id":"ava_iris"}`)
	if d := e.do("DELETE", "/v1/avatars/"+id, ""); d.status != 409 {
		t.Errorf("DELETE while a version still uses it = %d %s", d.status, d.raw)
	}
	if n := countFiles(t, folder.Dir); n != len(files) {
		t.Errorf("%d files kept, want %d", n, len(files))
	}
}

func countFiles(t *testing.T, dir string) int {
	n := 0
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			n++
		}
		return nil
	})
	return n
}

// An avatar no version uses is deleted with its files; ids of other accounts and
// built-ins are not deleted or shown.
func TestOwnAvatarDeleteAndScope(t *testing.T) {
	e := newEnv(t, nil)
	r := e.upload(avatartest.Manifest(), avatartest.Files())
	if r.status != 201 {
		t.Fatalf("POST /v1/avatars = %d %s", r.status, r.raw)
	}
	id := r.body["id"].(string)
	// A draft naming it does not hold it: only published versions do.
	if a := e.do("POST", "/v1/assistants", fmt.Sprintf(`{"name":"Draft","avatar_id":%q}`, id)); a.status != 201 {
		t.Fatalf("create = %d %s", a.status, a.raw)
	}
	if d := e.do("DELETE", "/v1/avatars/"+id, ""); d.status != 204 {
		t.Fatalf("DELETE = %d %s", d.status, d.raw)
	}
	if n := countFiles(t, folderOf(e.store).Dir); n != 0 {
		t.Errorf("%d files left after delete", n)
	}
	if g := e.do("GET", "/v1/avatars/"+id, ""); g.status != 404 || errCode(g) != "resource_not_found" {
		t.Errorf("GET after delete = %d %s", g.status, g.raw)
	}
	if a := e.do("POST", "/v1/assistants", fmt.Sprintf(`{"name":"Late","avatar_id":%q}`, id)); a.status != 400 || !strings.Contains(a.raw, "avatar_id") {
		t.Errorf("an assistant naming a deleted avatar = %d %s; want 400 on avatar_id", a.status, a.raw)
	}
	if d := e.do("DELETE", "/v1/avatars/ava_iris", ""); d.status != 400 {
		t.Errorf("DELETE of a built-in = %d %s; want 400", d.status, d.raw)
	}
	if g := e.do("GET", "/v1/avatars/ava_iris", ""); g.status != 200 || g.body["kind"] != "built_in" {
		t.Errorf("GET of a built-in = %d %s", g.status, g.raw)
	}

	// Another account's avatar is not found, neither for GET, DELETE nor an assistant.
	other := e.upload(avatartest.Manifest(), avatartest.Files())
	otherID := other.body["id"].(string)
	_, key2, err := accountsOf(e).Create(context.Background(), "Other", false)
	if err != nil {
		t.Fatal(err)
	}
	e2 := *e
	e2.key = key2
	if g := e2.do("GET", "/v1/avatars/"+otherID, ""); g.status != 404 {
		t.Errorf("another account's GET = %d", g.status)
	}
	if d := e2.do("DELETE", "/v1/avatars/"+otherID, ""); d.status != 404 {
		t.Errorf("another account's DELETE = %d", d.status)
	}
	if a := e2.do("POST", "/v1/assistants", fmt.Sprintf(`{"name":"Thief","avatar_id":%q}`, otherID)); a.status != 400 {
		t.Errorf("another account's avatar in an assistant = %d %s", a.status, a.raw)
	}
	if l := e2.do("GET", "/v1/avatars", ""); len(l.body["data"].([]any)) != 3 {
		t.Errorf("another account lists %s", l.raw)
	}
}

// Bad uploads get the sheet's named errors through the API; a JSON body is refused.
func TestOwnAvatarUploadErrors(t *testing.T) {
	e := newEnv(t, nil)
	files := avatartest.Files()
	delete(files, "eyes_closed")
	m := avatartest.Manifest()
	delete(m["anchors"].(map[string]any), "eyes_closed")
	r := e.upload(m, files)
	if r.status != 400 || errCode(r) != "parameter_missing" || !strings.Contains(r.raw, `"param":"eyes_closed"`) {
		t.Errorf("sheet without eyes_closed = %d %s", r.status, r.raw)
	}
	m = avatartest.Manifest()
	m["anchors"].(map[string]any)["mouth_open"] = map[string]int{"x": 5, "y": 5}
	if r := e.upload(m, avatartest.Files()); r.status != 400 || !strings.Contains(r.raw, "outside the face") {
		t.Errorf("mouth outside the face = %d %s", r.status, r.raw)
	}
	if r := e.do("POST", "/v1/avatars", `{"name":"x"}`); r.status != 415 {
		t.Errorf("a JSON body = %d %s; want 415", r.status, r.raw)
	}
	big := avatartest.Files()
	big["idle_2"] = bytes.Repeat([]byte("x"), avatars.MaxUploadBytes)
	if r := e.upload(avatartest.Manifest(), big); r.status != 413 {
		t.Errorf("an upload over the bound = %d %s; want 413", r.status, r.raw)
	}
	if r := e.do("GET", "/v1/avatars", ""); len(r.body["data"].([]any)) != 3 {
		t.Errorf("refused uploads created avatars: %s", r.raw)
	}
}

// An account has at most avatars.MaxPerAccount avatars of its own.
func TestOwnAvatarLimit(t *testing.T) {
	e := newEnv(t, nil)
	for i := range avatars.MaxPerAccount {
		if r := e.upload(avatartest.Manifest(), avatartest.Files()); r.status != 201 {
			t.Fatalf("upload %d = %d %s", i, r.status, r.raw)
		}
	}
	if r := e.upload(avatartest.Manifest(), avatartest.Files()); r.status != 409 || errCode(r) != "avatar_limit_reached" {
		t.Errorf("one over the limit = %d %s", r.status, r.raw)
	}
}

func accountsOf(e *env) *account.Service { return &account.Service{Store: e.store, Now: time.Now} }
