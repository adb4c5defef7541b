package lambda_test

import (
	"bytes"
	"encoding/json"
	"mime/multipart"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/bridgeline/bridgeline/shared/avatars/avatartest"
	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/persona"
)

// testAvatarBucket is the avatar assets bucket the scenario makes in moto.
const testAvatarBucket = "bridgeline-test-avatars"

// withAvatarBucket makes the avatar assets bucket in moto (withBus started it) for
// avatars-create, avatars-get, avatars-delete and persona-avatar.
func (s *stack) withAvatarBucket() {
	client := s3.New(s3.Options{Region: "us-east-1", BaseEndpoint: aws.String(s.motoURL), UsePathStyle: true,
		Credentials: aws.AnonymousCredentials{}})
	if _, err := client.CreateBucket(s.ctx, &s3.CreateBucketInput{Bucket: aws.String(testAvatarBucket)}); err != nil {
		s.t.Fatal(err)
	}
	s.refs["AvatarAssetsBucket"] = testAvatarBucket
}

// avatarUpload is the test character sheet as API Gateway hands a multipart POST
// /v1/avatars to its function: the body base64-encoded.
func avatarUpload(auth map[string]any) request {
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	mw.WriteField("sheet", string(avatartest.JSON(avatartest.Manifest())))
	for name, f := range avatartest.Files() {
		w, _ := mw.CreateFormFile(name, name+".png")
		w.Write(f)
	}
	mw.Close()
	return request{fn: "avatars-create", method: http.MethodPost, pattern: "/v1/avatars", path: "/v1/avatars",
		body: b.String(), base64: true, auth: auth,
		headers: map[string]string{"Content-Type": mw.FormDataContentType(), "Idempotency-Key": ident.New("idem")}}
}

// avatarScenario: an account's own avatar uploaded (its files in the bucket), read back
// with preview URLs, drawn by an assistant that is edited and published with it, read by
// the persona worker's route, refused deletion while the version uses it; a second one,
// unused, deleted.
func (s *stack) avatarScenario(acctID string, auth map[string]any) {
	t := s.t
	used := s.expect(avatarUpload(auth), http.StatusCreated)
	usedID, _ := used["id"].(string)
	if !strings.HasPrefix(usedID, "ava_") || used["kind"] != "custom" {
		t.Errorf("avatars-create = %v, want an own avatar", used)
	}
	got := s.expect(request{fn: "avatars-get", method: http.MethodGet, pattern: "/v1/avatars/{id}", path: "/v1/avatars/" + usedID, auth: auth}, http.StatusOK)
	if got["id"] != usedID || !strings.Contains(string(mustJSON(t, got)), testAvatarBucket) {
		t.Errorf("avatars-get = %v, want the avatar with preview URLs into its bucket", got)
	}
	post := func(fn, pattern, path, body string) request {
		return request{fn: fn, method: http.MethodPost, pattern: pattern, path: path, body: body, auth: auth,
			headers: map[string]string{"Content-Type": "application/json", "Idempotency-Key": ident.New("idem")}}
	}
	asst := s.expect(post("assistants-create", "/v1/assistants", "/v1/assistants",
		`{"name":"Mascot","system_prompt":"Be brief.","greeting":"Hi!","avatar_id":"`+usedID+`"}`), http.StatusCreated)
	asstID := asst["id"].(string)
	s.expect(request{fn: "assistants-update", method: http.MethodPatch, pattern: "/v1/assistants/{id}", path: "/v1/assistants/" + asstID,
		body: `{"avatar_id":"` + usedID + `","greeting":"Hello!"}`, auth: auth, headers: map[string]string{"Content-Type": "application/json"}}, http.StatusOK)
	s.expect(post("assistants-publish", "/v1/assistants/{id}/publish", "/v1/assistants/"+asstID+"/publish", ""), http.StatusCreated)

	body, _ := json.Marshal(persona.AvatarRequest{CallID: ident.New("call"), AccountID: acctID, AvatarID: usedID})
	authz, err := persona.SignAvatarRequest(body, testReportSecret, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	sheet := s.expect(request{fn: "persona-avatar", method: http.MethodPost, pattern: persona.AvatarPath, path: persona.AvatarPath,
		body: string(body), headers: map[string]string{"Content-Type": "application/json", "Authorization": authz}}, http.StatusOK)
	if parts, _ := sheet["parts"].([]any); len(parts) < 5 {
		t.Errorf("persona-avatar = %v, want the sheet's parts with their URLs", sheet)
	}

	del := func(id string) request {
		return request{fn: "avatars-delete", method: http.MethodDelete, pattern: "/v1/avatars/{id}", path: "/v1/avatars/" + id, auth: auth}
	}
	if e := s.expect(del(usedID), http.StatusConflict)["error"].(map[string]any); e["code"] != "avatar_in_use" {
		t.Errorf("deleting an avatar a published version uses: %v, want avatar_in_use", e)
	}
	spare := s.expect(avatarUpload(auth), http.StatusCreated)["id"].(string)
	if resp := s.call(del(spare)); resp.status != http.StatusNoContent {
		t.Errorf("deleting an unused avatar = %d %s, want 204", resp.status, resp.body)
	}
	s.expect(request{fn: "avatars-get", method: http.MethodGet, pattern: "/v1/avatars/{id}", path: "/v1/avatars/" + spare, auth: auth}, http.StatusNotFound)
}

// logoScenario: the persona worker reads the account's logo for the connecting screen
// through persona-avatar (beside the account, in the accounts table), alone, as a call
// with a built-in avatar asks for it; wantData is the file, base64-encoded.
func (s *stack) logoScenario(acctID, wantData string) {
	t := s.t
	body, _ := json.Marshal(persona.AvatarRequest{CallID: ident.New("call"), AccountID: acctID, Logo: true})
	authz, err := persona.SignAvatarRequest(body, testReportSecret, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	got := s.expect(request{fn: "persona-avatar", method: http.MethodPost, pattern: persona.AvatarPath, path: persona.AvatarPath,
		body: string(body), headers: map[string]string{"Content-Type": "application/json", "Authorization": authz}}, http.StatusOK)
	if l, _ := got["logo"].(map[string]any); l == nil || l["data"] != wantData || l["content_type"] != "image/png" || got["id"] != "" {
		t.Errorf("persona-avatar (logo) = %v, want the account's logo file and no sheet", got)
	}
}

// campaignScenario: a campaign of the assistant on the sim line, created (and replayed),
// given three more recipients by a CSV upload, listed, read with its counts and
// recipients, started, paused, resumed and canceled;
// its window is open one minute a day, so the runner, invoked on schedule, dials
// nobody.
func (s *stack) campaignScenario(asstID, lineID string, auth map[string]any) {
	t := s.t
	post := func(fn, pattern, path, body string) request {
		return request{fn: fn, method: http.MethodPost, pattern: pattern, path: path, body: body, auth: auth,
			headers: map[string]string{"Content-Type": "application/json", "Idempotency-Key": ident.New("idem")}}
	}
	get := func(fn, pattern, path string) request {
		return request{fn: fn, method: http.MethodGet, pattern: pattern, path: path, auth: auth}
	}
	create := post("campaigns-create", "/v1/campaigns", "/v1/campaigns",
		`{"name":"Renewals","assistant_id":"`+asstID+`","line_id":"`+lineID+`","recipients":[{"platform_handle":"+15550107301"},{"platform_handle":"+15550107302"}],`+
			`"settings":{"window":{"start":"00:00","end":"00:01"}}}`)
	cmp := s.expect(create, http.StatusCreated)
	id, _ := cmp["id"].(string)
	if replay := s.expect(create, http.StatusCreated); replay["id"] != id || cmp["status"] != "draft" {
		t.Errorf("campaign %v, replay %v; want a draft, the replay the same", cmp, replay)
	}
	upload := post("campaigns-recipients-add", "/v1/campaigns/{id}/recipients", "/v1/campaigns/"+id+"/recipients",
		"platform_handle,variables.first_name\n+15550107303,Ada\n+15550107304,Grace\n+15550107305,\n")
	upload.headers["Content-Type"] = "text/csv"
	if got := s.expect(upload, http.StatusOK); got["recipients"] != float64(5) {
		t.Errorf("upload of three = %v, want the campaign with 5 recipients", got)
	}
	if list := s.expect(get("campaigns-list", "/v1/campaigns", "/v1/campaigns"), http.StatusOK); len(list["data"].([]any)) != 1 {
		t.Errorf("campaigns list = %v, want the one", list)
	}
	for _, step := range []struct{ fn, path, status string }{
		{"campaigns-start", "start", "running"}, {"campaigns-pause", "pause", "paused"}, {"campaigns-resume", "resume", "running"},
	} {
		if got := s.expect(post(step.fn, "/v1/campaigns/{id}/"+step.path, "/v1/campaigns/"+id+"/"+step.path, ""), http.StatusOK); got["status"] != step.status {
			t.Errorf("%s = %v, want %s", step.path, got, step.status)
		}
	}
	s.overrides["campaign-runner"] = []string{"CAMPAIGN_WINDOW_SECONDS=3"}
	s.invoke("campaign-runner", mustJSON(t, readJSON(t, "eventbridge-scheduled.json")))
	got := s.expect(get("campaigns-get", "/v1/campaigns/{id}", "/v1/campaigns/"+id), http.StatusOK)
	if counts, _ := got["counts"].(map[string]any); got["status"] != "running" || counts == nil {
		t.Errorf("campaign after the runner = %v, want it running with its counts", got)
	}
	recips := s.expect(get("campaigns-recipients", "/v1/campaigns/{id}/recipients", "/v1/campaigns/"+id+"/recipients"), http.StatusOK)
	if data, _ := recips["data"].([]any); len(data) != 5 || data[3].(map[string]any)["variables"].(map[string]any)["first_name"] != "Grace" {
		t.Errorf("recipients = %v, want the two created and the three uploaded, in order", recips)
	}
	report := get("campaigns-report", "/v1/campaigns/{id}/report", "/v1/campaigns/"+id+"/report")
	if got := s.expect(report, http.StatusOK); got["object"] != "campaign_report" || got["recipients"] != float64(5) {
		t.Errorf("report = %v, want the campaign's report on its five recipients", got)
	}
	report.query = "format=csv"
	if resp := s.call(report); resp.status != http.StatusOK || !strings.HasPrefix(resp.headers["Content-Type"], "text/csv") ||
		strings.Count(string(resp.body), "\n") != 6 {
		t.Errorf("report?format=csv = %d %v %q, want a header and the five recipients' rows as CSV", resp.status, resp.headers, resp.body)
	}
	if got := s.expect(post("campaigns-cancel", "/v1/campaigns/{id}/cancel", "/v1/campaigns/"+id+"/cancel", ""), http.StatusOK); got["status"] != "canceled" {
		t.Errorf("cancel = %v, want canceled", got)
	}
}
