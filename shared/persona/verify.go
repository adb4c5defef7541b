package persona

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/bridgeline/bridgeline/shared/lktoken"
)

// ReportSubject is the subject (LiveKit "identity") of every report token. LiveKit's own
// webhooks are signed with the same fleet key but carry no subject, so a captured
// webhook can never pass as a worker report.
const ReportSubject = "bridgeline-persona-worker"

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

// VerifyReport reads a worker report from r and checks it was signed by a fleet key: the
// `Authorization` header holds a LiveKit API JWT (optionally after "Bearer ") signed with
// a key keys knows, unexpired, with subject ReportSubject, whose sha256 claim is the
// base64 SHA-256 of the raw body. It consumes and closes the body.
func VerifyReport(r *http.Request, keys lktoken.Keys) (Report, error) {
	defer r.Body.Close()
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxReportBytes+1))
	if err != nil {
		return Report{}, fmt.Errorf("%w: %v", ErrReportMalformed, err)
	}
	if len(body) > MaxReportBytes {
		return Report{}, ErrReportTooLarge
	}
	token := r.Header.Get("Authorization")
	if strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(token), "Bearer ")) == "" {
		return Report{}, ErrReportUnsigned
	}
	c, err := lktoken.VerifyBody(token, body, keys)
	if err != nil || c.Subject != ReportSubject {
		return Report{}, ErrReportSignature
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
