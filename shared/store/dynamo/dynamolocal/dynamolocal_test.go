package dynamolocal

import (
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

// TestEndpointAnswers checks the server speaks DynamoDB's JSON protocol on loopback.
func TestEndpointAnswers(t *testing.T) {
	ep := Endpoint(t)
	u, err := url.Parse(ep)
	if err != nil {
		t.Fatalf("url.Parse(%q): %v", ep, err)
	}
	if os.Getenv(EnvEndpoint) == "" && u.Hostname() != "127.0.0.1" {
		t.Errorf("endpoint host = %q, want 127.0.0.1", u.Hostname())
	}
	req, _ := http.NewRequest(http.MethodPost, ep, strings.NewReader("{}"))
	req.Header.Set("X-Amz-Target", "DynamoDB_20120810.ListTables")
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=test/20260101/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=00")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("ListTables: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("ListTables status = %d, want 200", resp.StatusCode)
	}
}
