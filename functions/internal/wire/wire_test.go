package wire_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/bridgeline/bridgeline/events/eventtest"
	"github.com/bridgeline/bridgeline/functions/internal/wire"
)

// TestConfigRefusesTheLiveKitSecretAsReportSecret: persona-report reads both secrets
// from Secrets Manager (as template.yaml gives them); with the persona report secret
// equal to the LiveKit API secret, which livekit-server also holds, the function refuses
// to start. Before, Validate compared the report secret with the LiveKit secret's local
// default, as a Lambda's configuration never held the real one, and passed.
func TestConfigRefusesTheLiveKitSecretAsReportSecret(t *testing.T) {
	moto := eventtest.StartMoto(t)
	ctx := context.Background()
	sm := secretsmanager.NewFromConfig(aws.Config{Region: "us-east-1",
		Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")},
		func(o *secretsmanager.Options) { o.BaseEndpoint = aws.String(moto) })
	put := func(name, value string) string {
		out, err := sm.CreateSecret(ctx, &secretsmanager.CreateSecretInput{Name: aws.String(name), SecretString: aws.String(value)})
		if err != nil {
			t.Fatal(err)
		}
		return aws.ToString(out.ARN)
	}
	const lkSecret = "LiveKitSecretOfThirtyTwoOrMoreLetters0123"
	creds, _ := json.Marshal(map[string]string{"api_key": "APIfleet", "api_secret": lkSecret, "keys": "APIfleet: " + lkSecret})
	lkARN := put("livekit", string(creds))
	sameARN := put("report-same", lkSecret)
	otherARN := put("report-other", "another-report-secret-of-32-or-more-characters")

	t.Setenv("AWS_ENDPOINT_URL_SECRETS_MANAGER", moto)
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	t.Setenv("LIVEKIT_CREDENTIALS_ARN", lkARN)

	t.Setenv("PERSONA_REPORT_SECRET_ARN", sameARN)
	if _, err := wire.Config(); err == nil || !strings.Contains(err.Error(), "PERSONA_REPORT_SECRET") {
		t.Errorf("Config() with the report secret equal to the LiveKit secret = %v, want an error naming PERSONA_REPORT_SECRET", err)
	}

	t.Setenv("PERSONA_REPORT_SECRET_ARN", otherARN)
	cfg, err := wire.Config()
	if err != nil {
		t.Fatalf("Config() with distinct secrets = %v", err)
	}
	if cfg.LiveKitAPIKey != "APIfleet" || cfg.LiveKitSecret != lkSecret {
		t.Errorf("Config() LiveKit key %q secret %q, want the secret's", cfg.LiveKitAPIKey, cfg.LiveKitSecret)
	}
}
