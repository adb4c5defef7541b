package recordings

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// FolderPath is the local server's route that serves a Folder's files:
// FolderPath + key + "?expires=<unix seconds>&signature=<hex HMAC-SHA256>".
const FolderPath = "/recordings/"

// FolderPatterns are Handler's routes on the local server (public: the signature is the
// credential).
var FolderPatterns = []string{"GET " + FolderPath + "{account}/{file}", "HEAD " + FolderPath + "{account}/{file}"}

// Folder keeps recordings as files under Dir (the local stack's data directory), and
// signs download URLs under BaseURL (the local server's public address) with Secret,
// which Handler checks.
type Folder struct {
	Dir     string
	BaseURL string
	Secret  []byte
	Now     func() time.Time
}

func (f *Folder) now() time.Time {
	if f.Now != nil {
		return f.Now()
	}
	return time.Now()
}

func (f *Folder) path(key string) string { return filepath.Join(f.Dir, filepath.FromSlash(key)) }

// Put writes the file through a temporary name and renames it into place, so a reader
// never sees half a file.
func (f *Folder) Put(_ context.Context, key string, body io.Reader, size int64) error {
	if err := checkKey(key); err != nil {
		return err
	}
	p := f.path(key)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return fmt.Errorf("recordings: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), ".put-*")
	if err != nil {
		return fmt.Errorf("recordings: %w", err)
	}
	defer os.Remove(tmp.Name())
	n, err := io.Copy(tmp, body)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil && n != size {
		err = fmt.Errorf("wrote %d bytes of %d", n, size)
	}
	if err != nil {
		return fmt.Errorf("recordings: put %s: %w", key, err)
	}
	if err := os.Rename(tmp.Name(), p); err != nil {
		return fmt.Errorf("recordings: %w", err)
	}
	return nil
}

// URL signs a GET of key that Handler serves until now+ttl.
func (f *Folder) URL(_ context.Context, key string, ttl time.Duration) (string, time.Time, error) {
	if err := checkKey(key); err != nil {
		return "", time.Time{}, err
	}
	if err := checkTTL(ttl); err != nil {
		return "", time.Time{}, err
	}
	if len(f.Secret) < 32 {
		return "", time.Time{}, errors.New("recordings: the folder's signing secret must be 32 bytes or more")
	}
	exp := f.now().Add(ttl).Truncate(time.Second)
	q := url.Values{"expires": {strconv.FormatInt(exp.Unix(), 10)}, "signature": {f.sign(key, exp.Unix())}}
	return strings.TrimSuffix(f.BaseURL, "/") + FolderPath + key + "?" + q.Encode(), exp, nil
}

func (f *Folder) sign(key string, exp int64) string {
	m := hmac.New(sha256.New, f.Secret)
	fmt.Fprintf(m, "GET\n%s\n%d", key, exp)
	return hex.EncodeToString(m.Sum(nil))
}

// Delete removes the file; one that is not there is no error.
func (f *Folder) Delete(_ context.Context, key string) error {
	if err := checkKey(key); err != nil {
		return err
	}
	if err := os.Remove(f.path(key)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("recordings: %w", err)
	}
	return nil
}

// Exists reports whether the file is there (the operator, or a cleanup of the data
// directory, may have removed it).
func (f *Folder) Exists(_ context.Context, key string) (bool, error) {
	if err := checkKey(key); err != nil {
		return false, err
	}
	_, err := os.Stat(f.path(key))
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	}
	return false, fmt.Errorf("recordings: %w", err)
}

// Handler serves GET FolderPath+key for a URL that URL signed and that has not expired:
// 403 for a bad or expired signature (as S3 answers), 404 once the file is gone.
func (f *Folder) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		key := strings.TrimPrefix(r.URL.Path, FolderPath)
		exp, err := strconv.ParseInt(r.URL.Query().Get("expires"), 10, 64)
		sig, _ := hex.DecodeString(r.URL.Query().Get("signature"))
		want, _ := hex.DecodeString(f.sign(key, exp))
		switch {
		case checkKey(key) != nil || err != nil || !hmac.Equal(sig, want):
			http.Error(w, "the URL's signature does not match", http.StatusForbidden)
			return
		case !f.now().Before(time.Unix(exp, 0)):
			http.Error(w, "the URL has expired; ask GET /v1/calls/{id}/recording for a new one", http.StatusForbidden)
			return
		}
		file, err := os.Open(f.path(key))
		if err != nil {
			http.Error(w, "no such recording", http.StatusNotFound)
			return
		}
		defer file.Close()
		st, err := file.Stat()
		if err != nil {
			http.Error(w, "no such recording", http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", ContentType)
		w.Header().Set("Cache-Control", "private, no-store")
		http.ServeContent(w, r, "", st.ModTime(), file)
	})
}
