package campaign

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/bridgeline/bridgeline/shared/apierr"
)

// The media types of a recipient file.
const (
	MediaCSV        = "text/csv"
	MediaJSONLines  = "application/x-ndjson"
	mediaJSONLines2 = "application/jsonl"
)

// CSV columns besides the fixed ones: "variables.<name>" and "metadata.<key>".
const (
	columnVariable = "variables."
	columnMetadata = "metadata."
)

// ParseRecipientFile reads an uploaded list of recipients: CSV with a header row
// (platform_handle, and optionally time_zone, variables.<name>, metadata.<key>; an
// empty cell sets nothing) or JSON Lines (one recipient object per line, as in
// POST /v1/campaigns). where names a recipient by its line in the file, for the errors
// validateRecipients gives. At most MaxListRecipients recipients.
//
// Errors: unsupported_media_type for another type; parameter errors naming the line.
func ParseRecipientFile(mediaType string, body []byte) (in []RecipientInput, where func(i int) string, err error) {
	body = bytes.TrimPrefix(body, []byte("\uFEFF")) // a spreadsheet's byte order mark
	var lines []int
	switch mediaType {
	case MediaCSV:
		in, lines, err = parseCSV(body)
	case MediaJSONLines, mediaJSONLines2:
		in, lines, err = parseJSONLines(body)
	default:
		return nil, nil, apierr.New(apierr.CodeUnsupportedMediaType,
			"upload recipients as Content-Type: text/csv (a header row first) or application/x-ndjson (JSON Lines)")
	}
	if err != nil {
		return nil, nil, err
	}
	return in, func(i int) string { return fmt.Sprintf("line %d", lines[i]) }, nil
}

func tooMany() error {
	return apierr.Invalid("recipients", fmt.Sprintf("an upload lists at most %d recipients", MaxListRecipients))
}

func parseCSV(body []byte) ([]RecipientInput, []int, error) {
	r := csv.NewReader(bytes.NewReader(body))
	r.ReuseRecord = true
	header, err := r.Read()
	if errors.Is(err, io.EOF) {
		return nil, nil, apierr.Param(apierr.CodeParameterMissing, "line 1", "the file is empty: its first line names the columns, platform_handle among them")
	}
	if err != nil {
		return nil, nil, csvError(err)
	}
	cols := make([]string, len(header))
	seen := map[string]bool{}
	for i, h := range header {
		h = strings.TrimSpace(h)
		switch {
		case h == "platform_handle", h == "time_zone":
		case strings.HasPrefix(h, columnVariable) && len(h) > len(columnVariable):
		case strings.HasPrefix(h, columnMetadata) && len(h) > len(columnMetadata):
		default:
			return nil, nil, apierr.Invalid("line 1", fmt.Sprintf(
				"column %d is %q: columns are platform_handle, time_zone, variables.<name> and metadata.<key>", i+1, h))
		}
		if seen[h] {
			return nil, nil, apierr.Invalid("line 1", fmt.Sprintf("column %q appears twice", h))
		}
		seen[h], cols[i] = true, h
	}
	if !seen["platform_handle"] {
		return nil, nil, apierr.Param(apierr.CodeParameterMissing, "line 1", "the header row has no platform_handle column")
	}
	var in []RecipientInput
	var lines []int
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			return in, lines, nil
		}
		if err != nil {
			return nil, nil, csvError(err)
		}
		if len(in) == MaxListRecipients {
			return nil, nil, tooMany()
		}
		line, _ := r.FieldPos(0)
		var ri RecipientInput
		for i, v := range rec {
			switch c := cols[i]; {
			case c == "platform_handle":
				ri.PlatformHandle = strings.TrimSpace(v)
			case c == "time_zone":
				ri.TimeZone = strings.TrimSpace(v)
			case v == "":
			case strings.HasPrefix(c, columnVariable):
				ri.Variables = put(ri.Variables, c[len(columnVariable):], v)
			default:
				ri.Metadata = put(ri.Metadata, c[len(columnMetadata):], v)
			}
		}
		in, lines = append(in, ri), append(lines, line)
	}
}

func put(m map[string]string, k, v string) map[string]string {
	if m == nil {
		m = map[string]string{}
	}
	m[k] = v
	return m
}

// csvError names the line a CSV reader stopped at.
func csvError(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return apierr.Invalid(fmt.Sprintf("line %d", pe.StartLine), fmt.Sprintf("the CSV could not be read there: %v", pe.Err))
	}
	return apierr.Invalid("recipients", "the CSV could not be read: "+err.Error())
}

func parseJSONLines(body []byte) ([]RecipientInput, []int, error) {
	var in []RecipientInput
	var lines []int
	for n, raw := range bytes.Split(body, []byte("\n")) {
		raw = bytes.TrimSpace(raw)
		if len(raw) == 0 {
			continue
		}
		if len(in) == MaxListRecipients {
			return nil, nil, tooMany()
		}
		var rb struct {
			PlatformHandle *string           `json:"platform_handle"`
			TimeZone       *string           `json:"time_zone"`
			Variables      map[string]string `json:"variables"`
			Metadata       map[string]string `json:"metadata"`
		}
		d := json.NewDecoder(bytes.NewReader(raw))
		d.DisallowUnknownFields()
		if err := d.Decode(&rb); err != nil || d.More() {
			msg := "each line must be one JSON object with platform_handle, and optionally time_zone, variables and metadata"
			if err != nil {
				msg += ": " + err.Error()
			}
			return nil, nil, apierr.Invalid(fmt.Sprintf("line %d", n+1), msg)
		}
		ri := RecipientInput{Variables: rb.Variables, Metadata: rb.Metadata}
		if rb.PlatformHandle != nil {
			ri.PlatformHandle = *rb.PlatformHandle
		}
		if rb.TimeZone != nil {
			ri.TimeZone = *rb.TimeZone
		}
		in, lines = append(in, ri), append(lines, n+1)
	}
	return in, lines, nil
}
