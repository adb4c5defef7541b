package destination

// premiumRange is a range of numbers that cost the caller more than a call and pay part
// of it to the number's holder (premium rate), or share the cost with the called party
// (shared cost): the ranges toll fraud dials. They are refused whatever the policy.
type premiumRange struct {
	prefix string // digits after the +
	what   string // for the error: which range it is
}

// premiumRanges are refused always. Sources: ITU-T E.164's list of assigned country
// codes for the global services (+808, +870, +881, +882, +883, +979); NANPA for the
// NANP's 900 service code and 976 (an area code and, in every area, the premium
// exchange NXX 976: see nanpExchange976); Ofcom's National Telephone Numbering Plan for
// the UK (09 premium rate, 087 and 084 service numbers, 070 personal numbering); the
// Bundesnetzagentur's plan for Germany (0900 premium, 0137 mass calling, 0180 shared
// cost); ARCEP's for France (089 premium, 081 and 082 shared cost); CNMC's for Spain
// (803, 806, 807 premium, 905 mass calling, 901 and 902 shared cost); AGCOM's for Italy
// (89x premium, 84x shared cost; Salerno's geographic numbers keep their 0, +39 089,
// and are not matched); ACM's for the Netherlands (0900, 0906, 0909); ACMA's for
// Australia (19xx, 1900 premium). docs/security.md lists them.
var premiumRanges = []premiumRange{
	{"808", "+808, the International Shared Cost Service"},
	{"870", "+870, the Inmarsat satellite network"},
	{"881", "+881, the Global Mobile Satellite System"},
	{"882", "+882, an international network"},
	{"883", "+883, an international network"},
	{"979", "+979, the International Premium Rate Service"},
	{"1900", "+1 900, NANP premium rate"},
	{"1976", "+1 976, NANP premium rate"},
	{"449", "+44 9, UK premium rate"},
	{"4487", "+44 87, UK revenue-sharing service numbers"},
	{"4484", "+44 84, UK shared-cost service numbers"},
	{"4470", "+44 70, UK personal numbering"},
	{"49900", "+49 900, German premium rate"},
	{"49137", "+49 137, German mass calling"},
	{"49180", "+49 180, German shared cost"},
	{"3389", "+33 89, French premium rate"},
	{"3381", "+33 81, French shared cost"},
	{"3382", "+33 82, French shared cost"},
	{"34803", "+34 803, Spanish premium rate"},
	{"34806", "+34 806, Spanish premium rate"},
	{"34807", "+34 807, Spanish premium rate"},
	{"34905", "+34 905, Spanish mass calling"},
	{"34901", "+34 901, Spanish shared cost"},
	{"34902", "+34 902, Spanish shared cost"},
	{"3989", "+39 89, Italian premium rate"},
	{"3984", "+39 84, Italian shared cost"},
	{"31900", "+31 900, Dutch premium rate"},
	{"31906", "+31 906, Dutch premium rate"},
	{"31909", "+31 909, Dutch premium rate"},
	{"6119", "+61 19, Australian premium rate"},
}

// premium names the premium-rate or shared-cost range digits (an E.164 number without
// its +) is in, or "".
func premium(digits string) string {
	for _, r := range premiumRanges {
		if len(digits) >= len(r.prefix) && digits[:len(r.prefix)] == r.prefix {
			return r.what
		}
	}
	if nanpExchange976(digits) {
		return "+1 NPA 976, NANP premium-rate exchange"
	}
	return ""
}

// nanpExchange976 reports whether digits is a NANP number (1, a three-digit area code, a
// seven-digit number) whose exchange is 976: the premium exchange of every area code.
func nanpExchange976(digits string) bool {
	return len(digits) == 11 && digits[0] == '1' && digits[4:7] == "976"
}
