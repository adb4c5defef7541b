package cfn

import (
	"encoding/json"
	"testing"
)

func TestParseIntrinsics(t *testing.T) {
	src := `
Parameters:
  Stage: {Type: String, Default: prod}
Resources:
  Bucket:
    Type: AWS::S3::Bucket
    Properties:
      Name: !Sub bucket-${Stage}
      Arn: !GetAtt Other.Arn
      List: !Split [",", !Ref Stage]
      Port: 443
      On: true
Outputs:
  Out:
    Value: !Join ["", [!Ref Bucket, "x"]]
`
	tpl, err := Parse([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(tpl.Resources["Bucket"].Properties)
	want := `{"Arn":{"Fn::GetAtt":["Other","Arn"]},"List":{"Fn::Split":[",",{"Ref":"Stage"}]},"Name":{"Fn::Sub":"bucket-${Stage}"},"On":true,"Port":443}`
	if string(got) != want {
		t.Errorf("properties = %s, want %s", got, want)
	}
	out, _ := json.Marshal(tpl.Outputs["Out"])
	if string(out) != `{"Value":{"Fn::Join":["",[{"Ref":"Bucket"},"x"]]}}` {
		t.Errorf("output = %s", out)
	}
	if tpl.Parameters["Stage"]["Default"] != "prod" {
		t.Errorf("parameter default = %v", tpl.Parameters["Stage"]["Default"])
	}
	if _, err := Parse([]byte("Resources:\n  X: !Bogus y\n")); err == nil {
		t.Error("an unknown tag parsed without error")
	}
}
