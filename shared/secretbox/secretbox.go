// Package secretbox seals short secrets (webhook signing secrets) for storage, so a copy
// of the table or the SQLite file does not hand out the keys that sign a customer's
// events. A sealed value is AES-256-GCM under a data key: on AWS a KMS data key
// (envelope encryption: the store keeps the data key encrypted by the KMS key beside the
// ciphertext, and only a function granted kms:Decrypt can open it), locally a key file
// under the data folder, created 0600 on first start.
//
// Sealed values start with Prefix, so a value written before sealing existed (clear
// text) still opens, and is sealed at its next write.
package secretbox

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	kmstypes "github.com/aws/aws-sdk-go-v2/service/kms/types"
)

// Prefix starts every sealed value.
const Prefix = "sealed:"

const (
	localTag = Prefix + "local:v1:"
	kmsTag   = Prefix + "kms:v1:"
)

// Sealed reports whether v is a sealed value (not clear text).
func Sealed(v string) bool { return strings.HasPrefix(v, Prefix) }

var b64 = base64.RawStdEncoding

func seal(key []byte, plain string) (string, error) {
	aead, err := gcm(key)
	if err != nil {
		return "", err
	}
	nonce := make([]byte, aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", err
	}
	return b64.EncodeToString(aead.Seal(nonce, nonce, []byte(plain), nil)), nil
}

func open(key []byte, enc string) (string, error) {
	aead, err := gcm(key)
	if err != nil {
		return "", err
	}
	raw, err := b64.DecodeString(enc)
	if err != nil || len(raw) < aead.NonceSize() {
		return "", errors.New("secretbox: malformed sealed value")
	}
	plain, err := aead.Open(nil, raw[:aead.NonceSize()], raw[aead.NonceSize():], nil)
	if err != nil {
		return "", fmt.Errorf("secretbox: open: %w", err)
	}
	return string(plain), nil
}

func gcm(key []byte) (cipher.AEAD, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("secretbox: %w", err)
	}
	return cipher.NewGCM(block)
}

// LocalKey seals with a 32-byte key kept in a file: the local stack's SQLite store.
type LocalKey struct {
	key []byte
}

// KeyFileName is the key file's name under the data folder.
const KeyFileName = "webhook-secrets.key"

// OpenKeyFile reads the key at path, creating it (32 random bytes, mode 0600) when it
// does not exist. A key file readable by others is refused: it guards every secret.
func OpenKeyFile(path string) (*LocalKey, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("secretbox: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	switch {
	case err == nil:
		key := make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			f.Close()
			return nil, err
		}
		_, werr := f.Write(key)
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			os.Remove(path)
			return nil, fmt.Errorf("secretbox: write key file: %w", werr)
		}
	case !errors.Is(err, fs.ErrExist):
		return nil, fmt.Errorf("secretbox: create key file: %w", err)
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("secretbox: %w", err)
	}
	if st.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("secretbox: key file %s is mode %v; it must be readable by its owner only (chmod 600)", path, st.Mode().Perm())
	}
	key, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("secretbox: read key file: %w", err)
	}
	if len(key) != 32 {
		return nil, fmt.Errorf("secretbox: key file %s holds %d bytes, want 32", path, len(key))
	}
	return &LocalKey{key: key}, nil
}

// Seal encrypts plain.
func (k *LocalKey) Seal(_ context.Context, plain string) (string, error) {
	enc, err := seal(k.key, plain)
	if err != nil {
		return "", err
	}
	return localTag + enc, nil
}

// Open decrypts a value Seal made; clear text (no Prefix) is returned as it is.
func (k *LocalKey) Open(_ context.Context, v string) (string, error) {
	if !Sealed(v) {
		return v, nil
	}
	enc, ok := strings.CutPrefix(v, localTag)
	if !ok {
		return "", fmt.Errorf("secretbox: a value sealed by another kind of key (%.20s...)", v)
	}
	return open(k.key, enc)
}

// KMSAPI is what KMS does for the envelope: *kms.Client.
type KMSAPI interface {
	GenerateDataKey(ctx context.Context, in *kms.GenerateDataKeyInput, opts ...func(*kms.Options)) (*kms.GenerateDataKeyOutput, error)
	Decrypt(ctx context.Context, in *kms.DecryptInput, opts ...func(*kms.Options)) (*kms.DecryptOutput, error)
}

// KMS seals with envelope encryption under a KMS key: each Seal asks for a fresh data
// key (kms:GenerateDataKey, the grant of the functions that create and rotate secrets)
// and stores it encrypted beside the ciphertext; Open has KMS decrypt the data key
// (kms:Decrypt, the grant of the functions that sign). Decrypted data keys are kept in
// memory, so a warm function signs without a KMS call per message.
type KMS struct {
	Client KMSAPI
	KeyID  string

	mu   sync.Mutex
	keys map[string][]byte // encrypted data key (base64) -> plaintext data key
}

// encryptionContext binds a data key to its use: a data key made for webhook secrets
// decrypts only with this context, and CloudTrail logs it.
var encryptionContext = map[string]string{"purpose": "bridgeline-webhook-secret"}

// maxCachedKeys bounds the data-key cache (one entry per sealed value at most).
const maxCachedKeys = 4096

// Seal encrypts plain under a new data key.
func (k *KMS) Seal(ctx context.Context, plain string) (string, error) {
	out, err := k.Client.GenerateDataKey(ctx, &kms.GenerateDataKeyInput{
		KeyId: aws.String(k.KeyID), KeySpec: kmstypes.DataKeySpecAes256, EncryptionContext: encryptionContext,
	})
	if err != nil {
		return "", fmt.Errorf("secretbox: generate data key: %w", err)
	}
	enc, err := seal(out.Plaintext, plain)
	if err != nil {
		return "", err
	}
	return kmsTag + b64.EncodeToString(out.CiphertextBlob) + ":" + enc, nil
}

// Open decrypts a value Seal made; clear text (no Prefix) is returned as it is.
func (k *KMS) Open(ctx context.Context, v string) (string, error) {
	if !Sealed(v) {
		return v, nil
	}
	rest, ok := strings.CutPrefix(v, kmsTag)
	wrapped, enc, ok2 := strings.Cut(rest, ":")
	if !ok || !ok2 {
		return "", fmt.Errorf("secretbox: not a KMS-sealed value (%.20s...)", v)
	}
	k.mu.Lock()
	key := k.keys[wrapped]
	k.mu.Unlock()
	if key == nil {
		blob, err := b64.DecodeString(wrapped)
		if err != nil {
			return "", errors.New("secretbox: malformed sealed value")
		}
		out, err := k.Client.Decrypt(ctx, &kms.DecryptInput{CiphertextBlob: blob, KeyId: aws.String(k.KeyID),
			EncryptionContext: encryptionContext})
		if err != nil {
			return "", fmt.Errorf("secretbox: decrypt data key: %w", err)
		}
		key = out.Plaintext
		k.mu.Lock()
		if k.keys == nil || len(k.keys) >= maxCachedKeys {
			k.keys = map[string][]byte{}
		}
		k.keys[wrapped] = key
		k.mu.Unlock()
	}
	return open(key, enc)
}
