package secretbox_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/kms"

	"github.com/bridgeline/bridgeline/events/eventtest"
	"github.com/bridgeline/bridgeline/shared/secretbox"
)

const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

type box interface {
	Seal(ctx context.Context, plain string) (string, error)
	Open(ctx context.Context, sealed string) (string, error)
}

// roundTrip: a sealed value is not the secret and does not contain it, two seals differ
// (fresh nonce, fresh data key), each opens to the secret, a tampered one does not, and
// clear text written before sealing opens as it is.
func roundTrip(t *testing.T, b box) {
	t.Helper()
	ctx := context.Background()
	s1, err := b.Seal(ctx, secret)
	if err != nil {
		t.Fatal(err)
	}
	s2, _ := b.Seal(ctx, secret)
	if !secretbox.Sealed(s1) || strings.Contains(s1, secret) || strings.Contains(s1, strings.TrimPrefix(secret, "whsec_")) || s1 == s2 {
		t.Errorf("Seal = %q and %q, want two different sealed values without the secret", s1, s2)
	}
	for _, s := range []string{s1, s2} {
		if got, err := b.Open(ctx, s); err != nil || got != secret {
			t.Errorf("Open(Seal) = %q, %v; want the secret", got, err)
		}
	}
	tampered := s1[:len(s1)-2] + "AA"
	if got, err := b.Open(ctx, tampered); err == nil {
		t.Errorf("Open(tampered) = %q, want an error", got)
	}
	if got, err := b.Open(ctx, secret); err != nil || got != secret {
		t.Errorf("Open(clear text) = %q, %v; want it as it is", got, err)
	}
}

func TestLocalKey(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	path := filepath.Join(dir, secretbox.KeyFileName)
	k, err := secretbox.OpenKeyFile(path)
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 || st.Size() != 32 {
		t.Fatalf("key file: %v, %v; want 32 bytes, mode 0600", st, err)
	}
	roundTrip(t, k)

	// The same file opens what the first key sealed (a restart); another key does not.
	sealed, _ := k.Seal(context.Background(), secret)
	again, err := secretbox.OpenKeyFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := again.Open(context.Background(), sealed); err != nil || got != secret {
		t.Errorf("reopened key: Open = %q, %v; want the secret", got, err)
	}
	other, _ := secretbox.OpenKeyFile(filepath.Join(t.TempDir(), secretbox.KeyFileName))
	if _, err := other.Open(context.Background(), sealed); err == nil {
		t.Error("another key opened the sealed value")
	}

	// A key file others can read is refused.
	os.Chmod(path, 0o644)
	if _, err := secretbox.OpenKeyFile(path); err == nil {
		t.Error("OpenKeyFile accepted a key file of mode 0644")
	}
}

// TestKMS seals and opens through KMS's API as moto serves it: GenerateDataKey to seal,
// Decrypt (once per data key, then from memory) to open.
func TestKMS(t *testing.T) {
	url := eventtest.StartMoto(t)
	cfg := aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")}
	client := kms.NewFromConfig(cfg, func(o *kms.Options) { o.BaseEndpoint = aws.String(url) })
	key, err := client.CreateKey(context.Background(), &kms.CreateKeyInput{})
	if err != nil {
		t.Fatal(err)
	}
	counting := &countingKMS{KMSAPI: client}
	b := &secretbox.KMS{Client: counting, KeyID: aws.ToString(key.KeyMetadata.KeyId)}
	roundTrip(t, b)
	if counting.decrypts != 2 {
		t.Errorf("Decrypt calls = %d, want 2 (one per data key; repeated opens come from memory)", counting.decrypts)
	}
	// A fresh box (another function instance) opens what this one sealed.
	sealed, _ := b.Seal(context.Background(), secret)
	if got, err := (&secretbox.KMS{Client: client, KeyID: b.KeyID}).Open(context.Background(), sealed); err != nil || got != secret {
		t.Errorf("another instance: Open = %q, %v; want the secret", got, err)
	}
}

type countingKMS struct {
	secretbox.KMSAPI
	decrypts int
}

func (c *countingKMS) Decrypt(ctx context.Context, in *kms.DecryptInput, opts ...func(*kms.Options)) (*kms.DecryptOutput, error) {
	c.decrypts++
	return c.KMSAPI.Decrypt(ctx, in, opts...)
}
