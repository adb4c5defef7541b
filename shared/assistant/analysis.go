package assistant

import (
	"strings"

	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/persona"
	"github.com/bridgeline/bridgeline/shared/schemacheck"
)

// Analysis is what the version's model is asked once a call has ended (summary,
// structured data matching a JSON Schema, success against criteria); the persona worker
// runs it and the call record keeps the result.
type Analysis = persona.Analysis

// Limits of an analysis; part of the contract in openapi.yaml.
const (
	MaxAnalysisSchemaBytes     = 8 * 1024
	MaxAnalysisSuccessCriteria = 2000
)

// validAnalysis checks a draft's analysis and returns it normalised (the schema
// compacted). An analysis that asks for nothing is refused: null turns it off.
func validAnalysis(a Analysis) (Analysis, error) {
	if err := maxLen("analysis.success_criteria", a.SuccessCriteria, MaxAnalysisSuccessCriteria); err != nil {
		return Analysis{}, err
	}
	if len(a.StructuredData) == 0 || string(a.StructuredData) == "null" {
		a.StructuredData = nil
	} else {
		s, err := schemacheck.Object(a.StructuredData, MaxAnalysisSchemaBytes)
		if err != nil {
			return Analysis{}, apierr.Invalid("analysis.structured_data", "structured_data "+err.Error())
		}
		a.StructuredData = s
	}
	if !a.Summary && a.StructuredData == nil && strings.TrimSpace(a.SuccessCriteria) == "" {
		return Analysis{}, apierr.Invalid("analysis",
			"an analysis asks for at least one of summary (true), structured_data or success_criteria; null turns it off")
	}
	return a, nil
}
