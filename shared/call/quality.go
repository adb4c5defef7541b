package call

import "github.com/bridgeline/bridgeline/shared/quality"

// TakeQualityDue returns what the call adds to its version's quality aggregate and marks
// it counted (QualityCounted), dropping the response samples it no longer needs. A store
// calls it on the record it writes, in the same conditional write as the record, as it
// does TakeUsageDue: the first write that holds the worker's final report (the
// assistant report received, with metrics) adds the call, every later one nothing. ok
// is false when nothing is due: a call no assistant version handled, a call whose
// report has not come (or never came), a call counted.
func (c *Call) TakeQualityDue() (due quality.Due, ok bool) {
	if c.QualityCounted || c.VersionID == "" || c.AssistantReport != ReportReceived || c.Metrics == nil {
		return quality.Due{}, false
	}
	counts := quality.OfCall(*c.Metrics, c.ResponseSamplesMS)
	c.QualityCounted, c.ResponseSamplesMS = true, nil
	return quality.Due{AccountID: c.AccountID, VersionID: c.VersionID, Counts: counts}, true
}
