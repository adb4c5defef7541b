package destination

// countryPrefixes maps an E.164 number's leading digits (after the +) to the ISO 3166-1
// alpha-2 code of the country they reach; Country takes the longest prefix that matches.
//
// Source: ITU-T Recommendation E.164, "List of ITU-T Recommendation E.164 assigned
// country codes" (the ITU Operational Bulletin's annex, as of 2024). Where one country
// code serves several countries, the longer prefixes come from the plan's own
// administrator: the North American Numbering Plan's area codes of Canada, the
// Caribbean and the US territories from NANPA's list of NPAs by location; Kazakhstan's
// +7 6 and +7 7 from its national plan. Other shared codes are mapped to their main
// country (+44's Crown Dependencies to GB, +47's Svalbard to NO, +61's external
// territories to AU, +590 to GP, +599 to CW, +262 to RE): a line that allows the main
// country reaches them too.
//
// The global services (+800 freephone, +808 shared cost, +870 and +881 satellite, +882
// and +883 international networks, +888, +979 premium rate) reach no country: they are
// not here, so no policy can allow them (premium.go refuses the paying ones by name).
var countryPrefixes = map[string]string{
	// World zone 1: the North American Numbering Plan. +1 is the US unless the area
	// code is another country's.
	"1": "US",
	// Canada.
	"1204": "CA", "1226": "CA", "1236": "CA", "1249": "CA", "1250": "CA", "1263": "CA", "1289": "CA",
	"1306": "CA", "1343": "CA", "1354": "CA", "1365": "CA", "1367": "CA", "1368": "CA", "1382": "CA",
	"1387": "CA", "1403": "CA", "1416": "CA", "1418": "CA", "1428": "CA", "1431": "CA", "1437": "CA",
	"1438": "CA", "1450": "CA", "1460": "CA", "1468": "CA", "1474": "CA", "1506": "CA", "1514": "CA",
	"1519": "CA", "1548": "CA", "1579": "CA", "1581": "CA", "1584": "CA", "1587": "CA", "1600": "CA",
	"1604": "CA", "1613": "CA", "1622": "CA", "1639": "CA", "1647": "CA", "1672": "CA", "1683": "CA",
	"1705": "CA", "1709": "CA", "1742": "CA", "1753": "CA", "1778": "CA", "1780": "CA", "1782": "CA",
	"1807": "CA", "1819": "CA", "1825": "CA", "1867": "CA", "1873": "CA", "1879": "CA", "1902": "CA",
	"1905": "CA", "1942": "CA",
	// The Caribbean and the Atlantic.
	"1242": "BS", "1246": "BB", "1264": "AI", "1268": "AG", "1284": "VG", "1340": "VI", "1345": "KY",
	"1441": "BM", "1473": "GD", "1649": "TC", "1658": "JM", "1664": "MS", "1721": "SX", "1758": "LC",
	"1767": "DM", "1784": "VC", "1787": "PR", "1809": "DO", "1829": "DO", "1849": "DO", "1868": "TT",
	"1869": "KN", "1876": "JM", "1939": "PR",
	// The Pacific.
	"1670": "MP", "1671": "GU", "1684": "AS",

	// Zone 2: Africa (and +20 Egypt, +27 South Africa), +29x the Atlantic.
	"20": "EG", "211": "SS", "212": "MA", "213": "DZ", "216": "TN", "218": "LY", "220": "GM", "221": "SN",
	"222": "MR", "223": "ML", "224": "GN", "225": "CI", "226": "BF", "227": "NE", "228": "TG", "229": "BJ",
	"230": "MU", "231": "LR", "232": "SL", "233": "GH", "234": "NG", "235": "TD", "236": "CF", "237": "CM",
	"238": "CV", "239": "ST", "240": "GQ", "241": "GA", "242": "CG", "243": "CD", "244": "AO", "245": "GW",
	"246": "IO", "248": "SC", "249": "SD", "250": "RW", "251": "ET", "252": "SO", "253": "DJ", "254": "KE",
	"255": "TZ", "256": "UG", "257": "BI", "258": "MZ", "260": "ZM", "261": "MG", "262": "RE", "263": "ZW",
	"264": "NA", "265": "MW", "266": "LS", "267": "BW", "268": "SZ", "269": "KM", "27": "ZA", "290": "SH",
	"291": "ER", "297": "AW", "298": "FO", "299": "GL",

	// Zones 3 and 4: Europe.
	"30": "GR", "31": "NL", "32": "BE", "33": "FR", "34": "ES", "350": "GI", "351": "PT", "352": "LU",
	"353": "IE", "354": "IS", "355": "AL", "356": "MT", "357": "CY", "358": "FI", "359": "BG", "36": "HU",
	"370": "LT", "371": "LV", "372": "EE", "373": "MD", "374": "AM", "375": "BY", "376": "AD", "377": "MC",
	"378": "SM", "380": "UA", "381": "RS", "382": "ME", "383": "XK", "385": "HR", "386": "SI", "387": "BA",
	"389": "MK", "39": "IT", "40": "RO", "41": "CH", "420": "CZ", "421": "SK", "423": "LI", "43": "AT",
	"44": "GB", "45": "DK", "46": "SE", "47": "NO", "48": "PL", "49": "DE",

	// Zone 5: South and Central America.
	"500": "FK", "501": "BZ", "502": "GT", "503": "SV", "504": "HN", "505": "NI", "506": "CR", "507": "PA",
	"508": "PM", "509": "HT", "51": "PE", "52": "MX", "53": "CU", "54": "AR", "55": "BR", "56": "CL",
	"57": "CO", "58": "VE", "590": "GP", "591": "BO", "592": "GY", "593": "EC", "594": "GF", "595": "PY",
	"596": "MQ", "597": "SR", "598": "UY", "599": "CW",

	// Zone 6: South-East Asia and Oceania.
	"60": "MY", "61": "AU", "62": "ID", "63": "PH", "64": "NZ", "65": "SG", "66": "TH", "670": "TL",
	"672": "NF", "673": "BN", "674": "NR", "675": "PG", "676": "TO", "677": "SB", "678": "VU", "679": "FJ",
	"680": "PW", "681": "WF", "682": "CK", "683": "NU", "685": "WS", "686": "KI", "687": "NC", "688": "TV",
	"689": "PF", "690": "TK", "691": "FM", "692": "MH",

	// Zone 7: Russia and Kazakhstan.
	"7": "RU", "76": "KZ", "77": "KZ",

	// Zone 8: East Asia.
	"81": "JP", "82": "KR", "84": "VN", "850": "KP", "852": "HK", "853": "MO", "855": "KH", "856": "LA",
	"86": "CN", "880": "BD", "886": "TW",

	// Zone 9: West, Central and South Asia, the Middle East.
	"90": "TR", "91": "IN", "92": "PK", "93": "AF", "94": "LK", "95": "MM", "960": "MV", "961": "LB",
	"962": "JO", "963": "SY", "964": "IQ", "965": "KW", "966": "SA", "967": "YE", "968": "OM", "970": "PS",
	"971": "AE", "972": "IL", "973": "BH", "974": "QA", "975": "BT", "976": "MN", "977": "NP", "98": "IR",
	"992": "TJ", "993": "TM", "994": "AZ", "995": "GE", "996": "KG", "998": "UZ",
}
