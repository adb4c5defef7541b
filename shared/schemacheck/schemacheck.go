// Package schemacheck checks JSON Schemas a customer gives (a tool's parameters): valid
// JSON, at most a size, an object schema at the top, and a schema under JSON Schema's
// 2020-12 meta-schema (or the draft its $schema names). It compiles each one as a
// validator would, so a schema the model's server or a validator would choke on is
// refused when it is saved, not in the middle of a call.
//
// Nothing is fetched: a $ref may point inside the schema only. The library's default
// loader reads local files for file: URLs; a customer's text must never reach the disk
// or the network, so every external reference is refused.
package schemacheck

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// ErrExternalRef is the error of a $ref (or $schema) naming a document outside the schema.
var ErrExternalRef = errors.New("external references are not allowed")

// noLoader refuses every document the compiler would load: only the schema itself and
// the meta-schemas the library carries are available.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("%w (%s)", ErrExternalRef, url)
}

// Object checks that raw is a JSON Schema for a JSON object of at most maxBytes bytes
// (as given, before any reformatting) and returns it compacted. The error's text is
// written for the customer.
func Object(raw json.RawMessage, maxBytes int) (json.RawMessage, error) {
	if len(raw) > maxBytes {
		return nil, fmt.Errorf("must be at most %d bytes of JSON (it is %d)", maxBytes, len(raw))
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, raw); err != nil {
		return nil, errors.New("must be valid JSON")
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(compact.Bytes()))
	if err != nil {
		return nil, errors.New("must be valid JSON")
	}
	obj, ok := doc.(map[string]any)
	if !ok {
		return nil, errors.New("must be a JSON Schema object ({\"type\": \"object\", ...})")
	}
	if t, _ := obj["type"].(string); t != "object" {
		return nil, errors.New(`must describe an object: "type": "object" at the top`)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(noLoader{})
	const url = "urn:bridgeline:schema"
	if err := c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("is not a valid JSON Schema: %s", explain(err))
	}
	if _, err := c.Compile(url); err != nil {
		return nil, fmt.Errorf("is not a valid JSON Schema: %s", explain(err))
	}
	return compact.Bytes(), nil
}

// explain is the compiler's error without the internal urn, on one line.
func explain(err error) string {
	// The library's load error does not wrap the loader's: match the text.
	if errors.Is(err, ErrExternalRef) || strings.Contains(err.Error(), ErrExternalRef.Error()) {
		return "a $ref or $schema names another document; " + ErrExternalRef.Error()
	}
	var ve *jsonschema.ValidationError
	if errors.As(err, &ve) {
		// The meta-schema's complaint, innermost first: what is wrong and where.
		msg := ve.Error()
		if i := strings.LastIndex(msg, "\n"); i >= 0 {
			msg = strings.TrimSpace(msg[i+1:])
		}
		return strings.TrimPrefix(strings.ReplaceAll(msg, "urn:bridgeline:schema", ""), "- ")
	}
	return strings.ReplaceAll(err.Error(), "urn:bridgeline:schema", "schema")
}

// Validate checks that instance (JSON) matches schema (a schema Object accepted) and
// returns an error that says where it does not, written for a model to correct itself
// and for the customer to read in a record.
func Validate(schema, instance json.RawMessage) error {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return errors.New("the schema is not valid JSON")
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(noLoader{})
	const url = "urn:bridgeline:schema"
	if err := c.AddResource(url, doc); err != nil {
		return fmt.Errorf("the schema is not valid: %s", explain(err))
	}
	sch, err := c.Compile(url)
	if err != nil {
		return fmt.Errorf("the schema is not valid: %s", explain(err))
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(instance))
	if err != nil {
		return errors.New("not valid JSON")
	}
	if err := sch.Validate(v); err != nil {
		var ve *jsonschema.ValidationError
		if errors.As(err, &ve) {
			return errors.New(mismatch(ve))
		}
		return err
	}
	return nil
}

// mismatch is a validation error's causes on one line, each with its place in the
// instance (as at '/order_id'), without the schema's internal urn; five at most.
func mismatch(ve *jsonschema.ValidationError) string {
	lines := strings.Split(ve.Error(), "\n")
	var parts []string
	for _, l := range lines[1:] { // the first names the schema
		l = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "- "))
		if l != "" {
			parts = append(parts, strings.ReplaceAll(l, "urn:bridgeline:schema", "schema"))
		}
	}
	if len(parts) == 0 {
		return "does not match the schema"
	}
	if len(parts) > 5 {
		parts = append(parts[:5], fmt.Sprintf("and %d more", len(parts)-5))
	}
	return strings.Join(parts, "; ")
}
