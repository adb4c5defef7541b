package persona

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/bridgeline/bridgeline/shared/lktoken"
)

// ReportSubject is the subject of every report token, and ReportIssuer its issuer.
const (
	ReportSubject = "bridgeline-persona-worker"
	ReportIssuer  = "bridgeline-persona-report"
)

// MinReportSecret is the shortest report secret (PERSONA_REPORT_SECRET) accepted.
const MinReportSecret = 32

// SignReport returns the Authorization header value of a report body: an HS256 JWT keyed
// with the report secret (PERSONA_REPORT_SECRET, shared by the control plane and the
// persona workers only), subject ReportSubject, valid two minutes, carrying the body's
// SHA-256. The key is not the LiveKit API secret: livekit-server and every worker hold
// that one, and a token livekit-server signs (a webhook) must never pass as a report.
func SignReport(body []byte, secret string, now time.Time) (string, error) {
	return sign(body, secret, now, ReportSubject)
}

// SignToolRequest is SignReport for a tool request (ToolPath), under its own subject,
// ToolSubject, so that neither route takes the other's messages.
func SignToolRequest(body []byte, secret string, now time.Time) (string, error) {
	return sign(body, secret, now, ToolSubject)
}

func sign(body []byte, secret string, now time.Time, subject string) (string, error) {
	if len(secret) < MinReportSecret {
		return "", fmt.Errorf("sign %s: the report secret must be at least %d characters", subject, MinReportSecret)
	}
	sum := sha256.Sum256(body)
	tok, err := lktoken.Sign(ReportIssuer, secret, lktoken.Claims{
		RegisteredClaims: jwt.RegisteredClaims{Subject: subject},
		Sha256:           base64.StdEncoding.EncodeToString(sum[:]),
	}, now, 2*time.Minute)
	if err != nil {
		return "", fmt.Errorf("sign %s: %w", subject, err)
	}
	return "Bearer " + tok, nil
}

// MaxReportBytes bounds a report body.
const MaxReportBytes = 1 << 20

// Errors of VerifyReport. Every one means "reject with 401" except ErrReportMalformed
// (400) and ErrReportTooLarge (413).
var (
	ErrReportUnsigned  = errors.New("persona report: missing Authorization")
	ErrReportSignature = errors.New("persona report: bad signature")
	ErrReportTooLarge  = errors.New("persona report: body too large")
	ErrReportMalformed = errors.New("persona report: malformed body")
)

// VerifyReport reads a worker report from r and checks it was signed with the report
// secret (SignReport): the `Authorization` header holds a JWT (optionally after
// "Bearer ") issued by ReportIssuer and keyed with secret, unexpired, with subject
// ReportSubject, whose sha256 claim is the base64 SHA-256 of the raw body. It consumes
// and closes the body. An empty secret verifies nothing.
func VerifyReport(r *http.Request, secret string) (Report, error) {
	body, err := verified(r, secret, ReportSubject, MaxReportBytes)
	if err != nil {
		return Report{}, err
	}
	var rep Report
	if err := json.Unmarshal(body, &rep); err != nil {
		return Report{}, fmt.Errorf("%w: %v", ErrReportMalformed, err)
	}
	if rep.Kind == "" || rep.CallID == "" {
		return Report{}, fmt.Errorf("%w: kind and call_id are required", ErrReportMalformed)
	}
	return rep, nil
}

// VerifyTransfer reads a worker's transfer request (TransferPath), signed as reports
// are; its errors are VerifyReport's.
func VerifyTransfer(r *http.Request, secret string) (TransferRequest, error) {
	body, err := verified(r, secret, ReportSubject, MaxReportBytes)
	if err != nil {
		return TransferRequest{}, err
	}
	var req TransferRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return TransferRequest{}, fmt.Errorf("%w: %v", ErrReportMalformed, err)
	}
	if req.CallID == "" || req.To == "" {
		return TransferRequest{}, fmt.Errorf("%w: call_id and to are required", ErrReportMalformed)
	}
	return req, nil
}

// MaxToolRequestBytes bounds a tool request body: the model's arguments.
const MaxToolRequestBytes = 64 << 10

// VerifyToolRequest is VerifyReport for a tool request (SignToolRequest).
func VerifyToolRequest(r *http.Request, secret string) (ToolRequest, error) {
	body, err := verified(r, secret, ToolSubject, MaxToolRequestBytes)
	if err != nil {
		return ToolRequest{}, err
	}
	var req ToolRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return ToolRequest{}, fmt.Errorf("%w: %v", ErrReportMalformed, err)
	}
	if req.CallID == "" || req.Name == "" {
		return ToolRequest{}, fmt.Errorf("%w: call_id and name are required", ErrReportMalformed)
	}
	if len(req.Arguments) == 0 {
		req.Arguments = json.RawMessage("{}")
	}
	return req, nil
}

// verified reads r's body, at most max bytes, and checks its signature for subject.
func verified(r *http.Request, secret, subject string, max int) ([]byte, error) {
	defer r.Body.Close()
	body, err := io.ReadAll(io.LimitReader(r.Body, int64(max)+1))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrReportMalformed, err)
	}
	if len(body) > max {
		return nil, ErrReportTooLarge
	}
	token := r.Header.Get("Authorization")
	if strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(token), "Bearer ")) == "" {
		return nil, ErrReportUnsigned
	}
	if len(secret) < MinReportSecret {
		return nil, ErrReportSignature
	}
	c, err := lktoken.VerifyBody(token, body, lktoken.KeyPair(ReportIssuer, secret))
	if err != nil || c.Subject != subject {
		return nil, ErrReportSignature
	}
	return body, nil
}
