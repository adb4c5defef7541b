package recordings

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// S3 keeps recordings in a bucket (template.yaml's RecordingsBucket: encrypted, public
// access blocked, objects expired after RecordingRetentionDays). The persona fleet's task
// role may only put objects; the functions that hand out URLs and delete may only get
// and delete them. A URL is a presigned GET, so it works for at most its ttl and only
// for that key.
type S3 struct {
	Client *s3.Client
	Bucket string
	Now    func() time.Time
}

func (b *S3) now() time.Time {
	if b.Now != nil {
		return b.Now()
	}
	return time.Now()
}

// Put uploads the file in one PutObject (a recording is about 6 KB a second: an hour is
// 22 MB, under the 5 GB a single put takes).
func (b *S3) Put(ctx context.Context, key string, body io.Reader, size int64) error {
	if err := checkKey(key); err != nil {
		return err
	}
	_, err := b.Client.PutObject(ctx, &s3.PutObjectInput{Bucket: &b.Bucket, Key: &key, Body: body,
		ContentLength: &size, ContentType: aws.String(ContentType)})
	if err != nil {
		return fmt.Errorf("recordings: put %s: %w", key, err)
	}
	return nil
}

// URL presigns a GET of key for ttl.
func (b *S3) URL(ctx context.Context, key string, ttl time.Duration) (string, time.Time, error) {
	if err := checkKey(key); err != nil {
		return "", time.Time{}, err
	}
	if err := checkTTL(ttl); err != nil {
		return "", time.Time{}, err
	}
	signed := b.now()
	req, err := s3.NewPresignClient(b.Client).PresignGetObject(ctx, &s3.GetObjectInput{Bucket: &b.Bucket, Key: &key},
		s3.WithPresignExpires(ttl))
	if err != nil {
		return "", time.Time{}, fmt.Errorf("recordings: presign %s: %w", key, err)
	}
	return req.URL, signed.Add(ttl), nil
}

// Exists asks S3 for the object's head (HeadObject, which s3:GetObject allows): false
// once it is gone, deleted or expired by the bucket's lifecycle rule.
func (b *S3) Exists(ctx context.Context, key string) (bool, error) {
	if err := checkKey(key); err != nil {
		return false, err
	}
	_, err := b.Client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &b.Bucket, Key: &key})
	var notFound *types.NotFound
	var noKey *types.NoSuchKey
	switch {
	case err == nil:
		return true, nil
	case errors.As(err, &notFound), errors.As(err, &noKey):
		return false, nil
	}
	return false, fmt.Errorf("recordings: head %s: %w", key, err)
}

// Delete removes the object; S3 answers a key that is not there the same way.
func (b *S3) Delete(ctx context.Context, key string) error {
	if err := checkKey(key); err != nil {
		return err
	}
	if _, err := b.Client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &b.Bucket, Key: &key}); err != nil {
		return fmt.Errorf("recordings: delete %s: %w", key, err)
	}
	return nil
}
