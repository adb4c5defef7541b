package recordings

import (
	"bytes"
	"io"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/bridgeline/bridgeline/events/eventtest"
	"github.com/bridgeline/bridgeline/shared/ident"
)

// The S3 store against moto's S3: put, a presigned GET that serves the bytes and says
// its expiry, delete. (moto does not check a presigned URL's expiry; S3 does, and the
// URL's X-Amz-Expires is what it checks.)
func TestS3(t *testing.T) {
	endpoint := eventtest.StartMoto(t)
	cfg := aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")}
	client := s3.NewFromConfig(cfg, func(o *s3.Options) { o.BaseEndpoint = aws.String(endpoint); o.UsePathStyle = true })
	bucket := "bridgeline-recordings-test"
	if _, err := client.CreateBucket(t.Context(), &s3.CreateBucketInput{Bucket: &bucket}); err != nil {
		t.Fatal(err)
	}
	b := &S3{Client: client, Bucket: bucket}
	key := Key(ident.New("acct"), ident.New("call"))
	body := bytes.Repeat([]byte("OggS"), 1000)
	if err := b.Put(t.Context(), key, bytes.NewReader(body), int64(len(body))); err != nil {
		t.Fatal(err)
	}
	before := time.Now()
	u, exp, err := b.URL(t.Context(), key, MaxURLTTL)
	if err != nil {
		t.Fatal(err)
	}
	if d := exp.Sub(before); d < MaxURLTTL-time.Second || d > MaxURLTTL+time.Second {
		t.Errorf("expires %s from now, want %s", d, MaxURLTTL)
	}
	pu, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	if q := pu.Query(); q.Get("X-Amz-Expires") != "900" || q.Get("X-Amz-Signature") == "" {
		t.Errorf("presigned URL %s: want X-Amz-Expires=900 and a signature", u)
	}
	get := func() (int, []byte) {
		resp, err := http.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		got, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, got
	}
	if code, got := get(); code != 200 || !bytes.Equal(got, body) {
		t.Errorf("GET the presigned URL: %d, %d bytes; want the %d put", code, len(got), len(body))
	}
	if _, _, err := b.URL(t.Context(), key, MaxURLTTL+time.Second); err == nil {
		t.Error("a URL over 15 minutes was presigned")
	}
	if ok, err := b.Exists(t.Context(), key); err != nil || !ok {
		t.Errorf("Exists before delete = %v, %v; want true", ok, err)
	}
	if err := b.Delete(t.Context(), key); err != nil {
		t.Fatal(err)
	}
	if err := b.Delete(t.Context(), key); err != nil {
		t.Errorf("second delete: %v", err)
	}
	if ok, err := b.Exists(t.Context(), key); err != nil || ok {
		t.Errorf("Exists after delete = %v, %v; want false", ok, err)
	}
	if _, err := b.Exists(t.Context(), "../etc/passwd"); err == nil {
		t.Error("Exists took a key Key did not make")
	}
	if code, _ := get(); code != 404 {
		t.Errorf("GET after delete: %d, want 404", code)
	}
}
