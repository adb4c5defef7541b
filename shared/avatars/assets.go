package avatars

import (
	"bytes"
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
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// Assets keeps an avatar's image files by key (Key). The control plane puts them once
// when the avatar is created, hands out short-lived URLs to them (previews, and the
// persona worker's reads) and deletes them with the avatar.
type Assets interface {
	Put(ctx context.Context, key string, body []byte, contentType string) error
	// Get reads a file; apierr.ErrNotFound-free: a missing key is fs.ErrNotExist.
	Get(ctx context.Context, key string) ([]byte, error)
	// URL is a GET URL of key that works until the time returned, ttl from now.
	URL(ctx context.Context, key string, ttl time.Duration) (string, time.Time, error)
	// Delete removes key; a key that is not there is no error.
	Delete(ctx context.Context, key string) error
}

// URLTTL is how long a preview or asset URL works.
const URLTTL = 15 * time.Minute

var keyPattern = regexp.MustCompile(`^avatars/[a-z]+_[0-9a-z]{26}/ava_[0-9a-z]{26}/[a-z_0-9]+\.(png|webp)$`)

// Key is where a part of an avatar is kept: under its account and its avatar, so that a
// policy or a listing can be scoped to one account's prefix.
func Key(accountID, avatarID string, p Part) string {
	return fmt.Sprintf("avatars/%s/%s/%s.%s", accountID, avatarID, p.Name, p.Format)
}

// ErrBadKey is a key that Key did not make.
var ErrBadKey = errors.New("avatars: not an avatar asset key")

func checkKey(key string) error {
	if !keyPattern.MatchString(key) {
		return fmt.Errorf("%w: %q", ErrBadKey, key)
	}
	return nil
}

func checkTTL(ttl time.Duration) error {
	if ttl <= 0 || ttl > URLTTL {
		return fmt.Errorf("avatars: a URL lives more than 0 and at most %s, not %s", URLTTL, ttl)
	}
	return nil
}

// S3 keeps the assets in a bucket (template.yaml's AvatarAssetsBucket: public access
// blocked, encrypted at rest, each object also put with SSE). Only the function that
// creates avatars may put, only the one that deletes may delete; the others presign GETs.
type S3 struct {
	Client *s3.Client
	Bucket string
	// KMSKeyID, when set, encrypts with that KMS key (aws:kms); else SSE-S3 (AES256).
	KMSKeyID string
}

// Put uploads one file, encrypted.
func (b *S3) Put(ctx context.Context, key string, body []byte, contentType string) error {
	if err := checkKey(key); err != nil {
		return err
	}
	in := &s3.PutObjectInput{Bucket: &b.Bucket, Key: &key, Body: bytes.NewReader(body),
		ContentLength: aws.Int64(int64(len(body))), ContentType: &contentType,
		ServerSideEncryption: types.ServerSideEncryptionAes256}
	if b.KMSKeyID != "" {
		in.ServerSideEncryption, in.SSEKMSKeyId = types.ServerSideEncryptionAwsKms, &b.KMSKeyID
	}
	if _, err := b.Client.PutObject(ctx, in); err != nil {
		return fmt.Errorf("avatars: put %s: %w", key, err)
	}
	return nil
}

// Get reads one file.
func (b *S3) Get(ctx context.Context, key string) ([]byte, error) {
	if err := checkKey(key); err != nil {
		return nil, err
	}
	out, err := b.Client.GetObject(ctx, &s3.GetObjectInput{Bucket: &b.Bucket, Key: &key})
	var noKey *types.NoSuchKey
	if errors.As(err, &noKey) {
		return nil, fmt.Errorf("avatars: %s: %w", key, fs.ErrNotExist)
	}
	if err != nil {
		return nil, fmt.Errorf("avatars: get %s: %w", key, err)
	}
	defer out.Body.Close()
	return io.ReadAll(io.LimitReader(out.Body, MaxFileBytes+1))
}

// URL presigns a GET of key for ttl.
func (b *S3) URL(ctx context.Context, key string, ttl time.Duration) (string, time.Time, error) {
	if err := checkKey(key); err != nil {
		return "", time.Time{}, err
	}
	if err := checkTTL(ttl); err != nil {
		return "", time.Time{}, err
	}
	signed := time.Now()
	req, err := s3.NewPresignClient(b.Client).PresignGetObject(ctx, &s3.GetObjectInput{Bucket: &b.Bucket, Key: &key},
		s3.WithPresignExpires(ttl))
	if err != nil {
		return "", time.Time{}, fmt.Errorf("avatars: presign %s: %w", key, err)
	}
	return req.URL, signed.Add(ttl), nil
}

// Delete removes one file.
func (b *S3) Delete(ctx context.Context, key string) error {
	if err := checkKey(key); err != nil {
		return err
	}
	if _, err := b.Client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &b.Bucket, Key: &key}); err != nil {
		return fmt.Errorf("avatars: delete %s: %w", key, err)
	}
	return nil
}

// FolderPath is the local server's route that serves a Folder's files:
// FolderPath + key + "?expires=<unix seconds>&signature=<hex HMAC-SHA256>".
const FolderPath = "/avatar-assets/"

// FolderPattern is Handler's route on the local server (public: the signature is the
// credential).
const FolderPattern = "GET " + FolderPath + "{path...}"

// Folder keeps the assets as files under Dir (the local stack's data directory), and
// signs URLs under BaseURL with Secret, which Handler checks.
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

// Put writes the file through a temporary name, so a reader never sees half of it.
func (f *Folder) Put(_ context.Context, key string, body []byte, _ string) error {
	if err := checkKey(key); err != nil {
		return err
	}
	p := f.path(key)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return fmt.Errorf("avatars: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), ".put-*")
	if err != nil {
		return fmt.Errorf("avatars: %w", err)
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(body)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), p)
	}
	if err != nil {
		return fmt.Errorf("avatars: put %s: %w", key, err)
	}
	return nil
}

// Get reads one file.
func (f *Folder) Get(_ context.Context, key string) ([]byte, error) {
	if err := checkKey(key); err != nil {
		return nil, err
	}
	b, err := os.ReadFile(f.path(key))
	if err != nil {
		return nil, fmt.Errorf("avatars: %w", err)
	}
	return b, nil
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
		return "", time.Time{}, errors.New("avatars: the folder's signing secret must be 32 bytes or more")
	}
	exp := f.now().Add(ttl).Truncate(time.Second)
	q := url.Values{"expires": {strconv.FormatInt(exp.Unix(), 10)}, "signature": {f.sign(key, exp.Unix())}}
	return strings.TrimSuffix(f.BaseURL, "/") + FolderPath + key + "?" + q.Encode(), exp, nil
}

func (f *Folder) sign(key string, exp int64) string {
	m := hmac.New(sha256.New, f.Secret)
	fmt.Fprintf(m, "avatar-asset\nGET\n%s\n%d", key, exp)
	return hex.EncodeToString(m.Sum(nil))
}

// Delete removes the file, and the avatar's folder once empty.
func (f *Folder) Delete(_ context.Context, key string) error {
	if err := checkKey(key); err != nil {
		return err
	}
	if err := os.Remove(f.path(key)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("avatars: %w", err)
	}
	os.Remove(filepath.Dir(f.path(key))) // fails while other parts remain: fine
	return nil
}

// Handler serves a URL that URL signed and that has not expired: 403 for a bad or
// expired signature (as S3 answers), 404 once the file is gone.
func (f *Folder) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := strings.TrimPrefix(r.URL.Path, FolderPath)
		exp, err := strconv.ParseInt(r.URL.Query().Get("expires"), 10, 64)
		sig, _ := hex.DecodeString(r.URL.Query().Get("signature"))
		want, _ := hex.DecodeString(f.sign(key, exp))
		switch {
		case checkKey(key) != nil || err != nil || !hmac.Equal(sig, want):
			http.Error(w, "the URL's signature does not match", http.StatusForbidden)
			return
		case !f.now().Before(time.Unix(exp, 0)):
			http.Error(w, "the URL has expired; ask GET /v1/avatars/{id} for a new one", http.StatusForbidden)
			return
		}
		b, err := os.ReadFile(f.path(key))
		if err != nil {
			http.Error(w, "no such asset", http.StatusNotFound)
			return
		}
		ct := ContentType(FormatPNG)
		if strings.HasSuffix(key, ".webp") {
			ct = ContentType(FormatWebP)
		}
		w.Header().Set("Content-Type", ct)
		w.Header().Set("Cache-Control", "private, max-age=300")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Write(b)
	})
}
