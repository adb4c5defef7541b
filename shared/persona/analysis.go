package persona

import "encoding/json"

// Analysis is what a version asks of the model once its call has ended: a summary, data
// matching a JSON Schema, and whether the call met the criteria. A worker runs it after
// its ended report (ReportAnalysis), with the model the version talks with.
type Analysis struct {
	// Summary asks for a short summary of the call.
	Summary bool `json:"summary"`
	// StructuredData is a JSON Schema (an object) the result's structured_data must
	// match; empty asks for none.
	StructuredData json.RawMessage `json:"structured_data,omitempty"`
	// SuccessCriteria is what a successful call achieves; empty asks for no verdict.
	SuccessCriteria string `json:"success_criteria,omitempty"`
}

// Analysis statuses (AnalysisResult.Status, the call record's analysis.status).
const (
	// AnalysisPending: the worker announced the analysis in its ended report and has not
	// sent it yet.
	AnalysisPending = "pending"
	// AnalysisCompleted: the model answered with everything asked, the structured data
	// matching the schema.
	AnalysisCompleted = "completed"
	// AnalysisFailed: the model failed, or answered twice with a result that did not match
	// (Error says why); or no analysis came in time.
	AnalysisFailed = "failed"
	// AnalysisSkipped: the deployment has no language model (Error says so), or the call
	// had nothing to analyse.
	AnalysisSkipped = "skipped"
)

// AnalysisResult is a call's analysis as the worker reports it and the record keeps it.
type AnalysisResult struct {
	Status string `json:"status"`
	// Summary is set when the version asked for one.
	Summary string `json:"summary,omitempty"`
	// StructuredData matches the version's schema; set when it asked for some.
	StructuredData json.RawMessage `json:"structured_data,omitempty"`
	// Success is the model's verdict against the success criteria; set when there were
	// some.
	Success *bool `json:"success,omitempty"`
	// Error says why a failed or skipped analysis has no result.
	Error string `json:"error,omitempty"`
}

// Final reports whether the analysis reached a final status.
func (a AnalysisResult) Final() bool {
	switch a.Status {
	case AnalysisCompleted, AnalysisFailed, AnalysisSkipped:
		return true
	}
	return false
}

// ReportAnalysis carries a call's analysis (Report.Analysis, final), sent after the
// ended report so that the call's end is never held for the model. The ended report of a
// call whose version asks for one says analysis pending.
const ReportAnalysis = "analysis"

// Bounds of an analysis result as the control plane takes it: a longer summary or larger
// structured data is cut to failed by the worker before it reports.
const (
	MaxAnalysisSummaryLen      = 4000
	MaxAnalysisStructuredBytes = 16 << 10
	MaxAnalysisErrorLen        = 500
)
