package avatars_test

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/bridgeline/bridgeline/events/eventtest"
	"github.com/bridgeline/bridgeline/shared/avatars"
	"github.com/bridgeline/bridgeline/shared/ident"
)

// The S3 asset store against moto's S3: an encrypted put under the account's prefix, a
// read, a presigned GET that serves the bytes, a delete.
func TestS3Assets(t *testing.T) {
	endpoint := eventtest.StartMoto(t)
	cfg := aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")}
	client := s3.NewFromConfig(cfg, func(o *s3.Options) { o.BaseEndpoint = aws.String(endpoint); o.UsePathStyle = true })
	bucket := "bridgeline-avatar-assets-test"
	if _, err := client.CreateBucket(t.Context(), &s3.CreateBucketInput{Bucket: &bucket}); err != nil {
		t.Fatal(err)
	}
	b := &avatars.S3{Client: client, Bucket: bucket}
	acct, id := ident.New("acct"), ident.New("ava")
	key := avatars.Key(acct, id, avatars.Part{Name: avatars.PartMouthOpen, Format: avatars.FormatPNG})
	if want := "avatars/" + acct + "/" + id + "/mouth_open.png"; key != want {
		t.Fatalf("Key = %s, want %s", key, want)
	}
	body := []byte("\x89PNG\r\n\x1a\n not really")
	if err := b.Put(t.Context(), key, body, "image/png"); err != nil {
		t.Fatal(err)
	}
	head, err := client.HeadObject(t.Context(), &s3.HeadObjectInput{Bucket: &bucket, Key: &key})
	if err != nil {
		t.Fatal(err)
	}
	if head.ServerSideEncryption != "AES256" || aws.ToString(head.ContentType) != "image/png" {
		t.Errorf("stored with SSE %q, type %q; want AES256, image/png", head.ServerSideEncryption, aws.ToString(head.ContentType))
	}
	if got, err := b.Get(t.Context(), key); err != nil || !bytes.Equal(got, body) {
		t.Errorf("Get = %q, %v", got, err)
	}
	u, _, err := b.URL(t.Context(), key, avatars.URLTTL)
	if err != nil {
		t.Fatal(err)
	}
	if pu, _ := url.Parse(u); pu.Query().Get("X-Amz-Expires") != "900" {
		t.Errorf("presigned URL %s: want X-Amz-Expires=900", u)
	}
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !bytes.Equal(got, body) {
		t.Errorf("GET the presigned URL: %d %q", resp.StatusCode, got)
	}
	if _, _, err := b.URL(t.Context(), key, avatars.URLTTL*2); err == nil {
		t.Error("a URL over 15 minutes was presigned")
	}
	if err := b.Delete(t.Context(), key); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Get(t.Context(), key); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Get after delete: %v, want fs.ErrNotExist", err)
	}
	if err := b.Put(t.Context(), "../"+key, body, "image/png"); !errors.Is(err, avatars.ErrBadKey) {
		t.Errorf("a key Key did not make: %v", err)
	}
}
