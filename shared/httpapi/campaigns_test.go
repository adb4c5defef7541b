package httpapi_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestCampaignValidation: POST /v1/campaigns answers bad requests with the documented
// error and the parameter at fault, and creates nothing; the lifecycle routes refuse a
// step the status does not allow with 409 campaign_state_invalid; the reads refuse bad
// ids and filters.
func TestCampaignValidation(t *testing.T) {
	m := newModeStack(t)
	e := m.test
	asstID := publishedAssistant(t, m)
	body := func(recipients, settings string) string {
		if settings == "" {
			settings = "{}"
		}
		return fmt.Sprintf(`{"assistant_id":%q,"line_id":%q,"recipients":%s,"settings":%s}`, asstID, m.lineID, recipients, settings)
	}
	one := `[{"platform_handle":"sim:alice"}]`
	many := "[" + strings.TrimSuffix(strings.Repeat(`{"platform_handle":"sim:alice"},`, 1001), ",") + "]"
	for _, tc := range []struct {
		name, body  string
		status      int
		code, param string
	}{
		{"too many recipients", body(many, ""), 400, "parameter_invalid", "recipients"},
		{"a handle the line cannot dial", body(`[{"platform_handle":"alice"}]`, ""), 400, "parameter_invalid", "recipients[0].platform_handle"},
		{"a blank handle", body(`[{"platform_handle":"sim:alice"},{"platform_handle":" "}]`, ""), 400, "parameter_missing", "recipients[1].platform_handle"},
		{"concurrency above the account's limit", body(one, `{"max_concurrent_calls":21}`), 400, "parameter_invalid", "settings.max_concurrent_calls"},
		{"zero concurrency", body(one, `{"max_concurrent_calls":0}`), 400, "parameter_invalid", "settings.max_concurrent_calls"},
		{"no rate", body(one, `{"calls_per_second":0}`), 400, "parameter_invalid", "settings.calls_per_second"},
		{"too fast", body(one, `{"calls_per_second":11}`), 400, "parameter_invalid", "settings.calls_per_second"},
		{"retry on an unknown outcome", body(one, `{"retry":{"max_attempts":2,"on":["answered"]}}`), 400, "parameter_invalid", "settings.retry.on"},
		{"too many attempts", body(one, `{"retry":{"max_attempts":11}}`), 400, "parameter_invalid", "settings.retry.max_attempts"},
		{"an unknown time zone", body(one, `{"window":{"time_zone":"Mars/Olympus"}}`), 400, "parameter_invalid", "settings.window.time_zone"},
		{"a recipient's unknown time zone", body(`[{"platform_handle":"sim:alice"},{"platform_handle":"sim:bob","time_zone":"Mars/Olympus"}]`, ""), 400, "parameter_invalid", "recipients[1].time_zone"},
		{"a recipient in the server's local zone", body(`[{"platform_handle":"sim:alice","time_zone":"Local"}]`, ""), 400, "parameter_invalid", "recipients[0].time_zone"},
		{"a window that ends before it starts", body(one, `{"window":{"start":"17:00","end":"09:00"}}`), 400, "parameter_invalid", "settings.window.end"},
		{"a bad day", body(one, `{"window":{"days":["someday"]}}`), 400, "parameter_invalid", "settings.window.days"},
		{"no assistant", `{"recipients":` + one + `}`, 400, "parameter_missing", "assistant_id"},
		{"an unknown assistant", `{"assistant_id":"asst_01m813q4jpa7fqz94g6r8cb30d","recipients":` + one + `}`, 404, "resource_not_found", "assistant_id"},
		{"a malformed line", `{"assistant_id":"` + asstID + `","line_id":"nope","recipients":` + one + `}`, 400, "parameter_invalid", "line_id"},
		{"an unknown field", `{"assistant_id":"` + asstID + `","recipients":` + one + `,"colour":"red"}`, 400, "parameter_unknown", "colour"},
		{"amd neither boolean nor object", body(one, `{"amd":"yes"}`), 400, "parameter_invalid", "settings.amd"},
		{"amd null", body(one, `{"amd":null}`), 400, "parameter_invalid", "settings.amd"},
		{"amd with a blank message", body(one, `{"amd":{"voicemail_message":"  "}}`), 400, "parameter_invalid", "settings.amd.voicemail_message"},
		{"amd with a message not a string", body(one, `{"amd":{"voicemail_message":7}}`), 400, "parameter_invalid", "settings.amd.voicemail_message"},
		{"amd with an unknown key", body(one, `{"amd":{"beep":true}}`), 400, "parameter_unknown", "settings.amd.beep"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.do("POST", "/v1/campaigns", tc.body)
			errObj, _ := r.body["error"].(map[string]any)
			if r.status != tc.status || errCode(r) != tc.code || errObj["param"] != tc.param {
				t.Errorf("= %d %s, want %d %s on %s", r.status, r.raw, tc.status, tc.code, tc.param)
			}
		})
	}
	if r := e.do("GET", "/v1/campaigns", ""); r.status != 200 || len(r.body["data"].([]any)) != 0 {
		t.Fatalf("after the refused creates: %d %s, want no campaign", r.status, r.raw)
	}

	c := e.do("POST", "/v1/campaigns", body(one, `{"window":{"time_zone":"Europe/Berlin","days":["MON","fri","mon"],"start":"09:00","end":"17:30"}}`))
	if c.status != 201 {
		t.Fatalf("create = %d %s", c.status, c.raw)
	}
	id := c.body["id"].(string)
	zoned := e.do("POST", "/v1/campaigns", body(`[{"platform_handle":"sim:alice","time_zone":"America/Chicago"},{"platform_handle":"sim:bob"}]`, ""))
	if zoned.status != 201 {
		t.Fatalf("create with a recipient's time zone = %d %s", zoned.status, zoned.raw)
	}
	if r := e.do("GET", "/v1/campaigns/"+zoned.body["id"].(string)+"/recipients", ""); r.status != 200 ||
		r.body["data"].([]any)[0].(map[string]any)["time_zone"] != "America/Chicago" || r.body["data"].([]any)[1].(map[string]any)["time_zone"] != nil {
		t.Errorf("recipients = %s, want the first in America/Chicago and the second with a null time_zone", r.raw)
	}
	st := c.body["settings"].(map[string]any)
	if w := st["window"].(map[string]any); fmt.Sprint(w["days"]) != "[mon fri]" || st["max_concurrent_calls"].(float64) != 5 ||
		st["retry"].(map[string]any)["max_attempts"].(float64) != 2 || c.body["status"] != "draft" {
		t.Errorf("created settings = %v, want days normalized, defaults filled in", st)
	}
	if a, _ := st["amd"].(map[string]any); a["enabled"] != true || a["voicemail_message"] != nil {
		t.Errorf("created settings.amd = %v, want on by default with no message", st["amd"])
	}
	for given, want := range map[string]string{
		`false`: `{"enabled":false}`,
		`{"voicemail_message":"Hi {{first_name}}."}`: `{"enabled":true,"voicemail_message":"Hi {{first_name}}."}`,
	} {
		r := e.do("POST", "/v1/campaigns", body(one, `{"amd":`+given+`}`))
		a, _ := json.Marshal(r.body["settings"].(map[string]any)["amd"])
		if r.status != 201 || string(a) != want {
			t.Errorf("settings.amd %s: %d amd %s, want %s", given, r.status, a, want)
		}
	}
	for _, tc := range []struct {
		method, path string
		status       int
		code         string
	}{
		{"POST", "/v1/campaigns/" + id + "/pause", 409, "campaign_state_invalid"},
		{"POST", "/v1/campaigns/" + id + "/resume", 409, "campaign_state_invalid"},
		{"GET", "/v1/campaigns/cmp_01m813q4jpa7fqz94g6r8cb30d", 404, "resource_not_found"},
		{"POST", "/v1/campaigns/cmp_01m813q4jpa7fqz94g6r8cb30d/start", 404, "resource_not_found"},
		{"GET", "/v1/campaigns/" + id + "/recipients?status=bogus", 400, "parameter_invalid"},
		{"GET", "/v1/campaigns/" + id + "/recipients?limit=0", 400, "parameter_invalid"},
		{"GET", "/v1/campaigns/" + id + "/recipients?starting_after=cmp_x", 400, "parameter_invalid"},
		{"GET", "/v1/campaigns?status=bogus", 400, "parameter_invalid"},
		{"GET", "/v1/campaigns/" + id + "/report?format=xlsx", 400, "parameter_invalid"},
		{"GET", "/v1/campaigns/" + id + "/report?limit=5", 400, "parameter_unknown"},
		{"GET", "/v1/campaigns/cmp_01m813q4jpa7fqz94g6r8cb30d/report", 404, "resource_not_found"},
		{"GET", "/v1/campaigns/cmp_01m813q4jpa7fqz94g6r8cb30d/report?format=csv", 404, "resource_not_found"},
		{"POST", "/v1/campaigns/" + id + "/cancel", 200, ""},
		{"POST", "/v1/campaigns/" + id + "/start", 409, "campaign_state_invalid"},
	} {
		if r := e.do(tc.method, tc.path, ""); r.status != tc.status || errCode(r) != tc.code {
			t.Errorf("%s %s = %d %s, want %d %s", tc.method, tc.path, r.status, r.raw, tc.status, tc.code)
		}
	}
	if r := e.do("GET", "/v1/campaigns/"+id, ""); r.body["status"] != "canceled" || r.body["counts"].(map[string]any)["canceled"].(float64) != 1 {
		t.Errorf("a canceled draft = %s, want its recipient canceled", r.raw)
	}
	// A campaign that placed no call reports none, with no rates yet.
	if r := e.do("GET", "/v1/campaigns/"+id+"/report", ""); r.status != 200 || r.body["calls"].(float64) != 0 ||
		r.body["connect_rate"] != nil || r.body["average_duration_ms"] != nil || len(r.body["hours"].([]any)) != 0 {
		t.Errorf("the canceled draft's report = %d %s, want no calls and null rates", r.status, r.raw)
	}
}

// TestCampaignUpload: a draft created without recipients does not start; uploads of CSV
// and JSON Lines add to its list, in order; a bad line names itself and adds nothing; a
// body of another type is 415; a test key uploads to a sim line's campaign.
func TestCampaignUpload(t *testing.T) {
	m := newModeStack(t)
	e := m.test
	asstID := publishedAssistant(t, m)
	c := e.do("POST", "/v1/campaigns", fmt.Sprintf(`{"assistant_id":%q,"line_id":%q}`, asstID, m.lineID))
	id, _ := c.body["id"].(string)
	if c.status != 201 || c.body["recipients"] != float64(0) {
		t.Fatalf("create with no recipients = %d %s, want a draft with none", c.status, c.raw)
	}
	if r := e.do("POST", "/v1/campaigns/"+id+"/start", ""); r.status != 409 || errCode(r) != "campaign_state_invalid" {
		t.Errorf("start with no recipients = %d %s, want 409 campaign_state_invalid", r.status, r.raw)
	}
	path := "/v1/campaigns/" + id + "/recipients"
	r := e.do("POST", path, "platform_handle,variables.first_name\nsim:ada,Ada\nsim:grace,Grace\n", "Content-Type", "text/csv; charset=utf-8")
	if r.status != 200 || r.body["recipients"] != float64(2) || r.body["counts"].(map[string]any)["pending"] != float64(2) {
		t.Fatalf("CSV upload = %d %s, want the campaign with 2 pending recipients", r.status, r.raw)
	}
	r = e.do("POST", path, `{"platform_handle":"sim:alan","metadata":{"crm":"7"}}`+"\n", "Content-Type", "application/x-ndjson")
	if r.status != 200 || r.body["recipients"] != float64(3) {
		t.Fatalf("JSON Lines upload = %d %s, want 3 recipients", r.status, r.raw)
	}
	r = e.do("POST", path, "platform_handle\nsim:ok\nalice\n", "Content-Type", "text/csv")
	if errObj, _ := r.body["error"].(map[string]any); r.status != 400 || errObj["param"] != "line 3.platform_handle" {
		t.Errorf("a handle the sim cannot dial on line 3 = %d %s, want 400 naming line 3.platform_handle", r.status, r.raw)
	}
	if r := e.do("POST", path, `[{"platform_handle":"sim:x"}]`); r.status != 415 || errCode(r) != "unsupported_media_type" {
		t.Errorf("a JSON body = %d %s, want 415", r.status, r.raw)
	}
	if r := e.do("POST", "/v1/campaigns/cmp_01m813q4jpa7fqz94g6r8cb30d/recipients", "platform_handle\nsim:x\n", "Content-Type", "text/csv"); r.status != 404 {
		t.Errorf("upload to an unknown campaign = %d %s, want 404", r.status, r.raw)
	}
	list := e.do("GET", path, "")
	data, _ := list.body["data"].([]any)
	if len(data) != 3 || data[0].(map[string]any)["platform_handle"] != "sim:ada" || data[2].(map[string]any)["metadata"].(map[string]any)["crm"] != "7" {
		t.Errorf("recipients = %s, want ada, grace, alan in upload order", list.raw)
	}
	if r := e.do("POST", "/v1/campaigns/"+id+"/cancel", ""); r.status != 200 {
		t.Fatalf("cancel = %d %s", r.status, r.raw)
	}
	if r := e.do("POST", path, "platform_handle\nsim:late\n", "Content-Type", "text/csv"); r.status != 409 || errCode(r) != "campaign_state_invalid" {
		t.Errorf("upload to a canceled campaign = %d %s, want 409", r.status, r.raw)
	}
}

// publishedAssistant creates and publishes an assistant with m's live key.
func publishedAssistant(t *testing.T, m *modeStack) string {
	t.Helper()
	asst := m.live.do("POST", "/v1/assistants", `{"name":"Desk","system_prompt":"Help.","greeting":"Hi.","avatar_id":"ava_iris"}`)
	asstID, _ := asst.body["id"].(string)
	if r := m.live.do("POST", "/v1/assistants/"+asstID+"/publish", ""); r.status != 201 {
		t.Fatalf("publish = %d %s", r.status, r.raw)
	}
	return asstID
}
