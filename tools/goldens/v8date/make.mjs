// Writes goldens/v8date.json: node's own `new Date(s).getTime()` (V8's date parser, ISO and
// legacy forms) for hand-picked strings and generated ones, with TZ=UTC (forms without a zone
// are local time in V8; arbor reads them as UTC). arbor_core::v8date must agree
// (crates/arbor-core/tests/v8_date.rs). Usage: TZ=UTC node tools/goldens/v8date/make.mjs OUT
import { writeFileSync } from "node:fs";
if (process.env.TZ !== "UTC") throw new Error("run with TZ=UTC");
const fixed = ["2026-11-24T20:05:04.000Z", "2026-11-24 20:05:04Z", "Nov 24 2026 20:05:05 GMT", "2026-11-31T20:05:06Z", "2026-11-24T20:05:07z",
	"2026-11-24T20:05:08+0000", "2024/01/02", "1", "Tue Nov 24 2026 20:05:09 GMT+0000 (Coordinated Universal Time)", "24 Nov 2026 20:05:10 UTC",
	"2026-11-24T20:05:11.5Z", "November 24, 2026 20:05:12", "2026-11-24T20:05:13", "11/24/2026", "2026-02-29T00:00:00Z", "Mon, 24 Nov 2026 20:05:14 GMT",
	"2026-11-24T25:00:00Z", "12:00 2026-11-24", "2026-11-24 20:05:15 +01:00", "  2026-11-24T20:05:16Z  ", "2026-11-24T20:05", "Nov 24 2026", "2026",
	"garbage", "2026-13-01", "2025-02-30T00:00:00.000Z", "2026-11-31", "Nov 24", "2026-11-24T24:00:00Z", "2026-11-24T24:00:01Z",
	"2026-11-24T20:05:04.1234567891Z", "2026-11-24T20:05Z", "2026-11-24 25:00", "+002026-11-24", "-000000-01-01", "2026-11-24T20:05:04+01",
	"Nov 24 2026 8:05 pm", "20:05 Nov 24 2026 GMT+0130", "2026-11-24T10:00:00.000Z junk", "", " ", "0", "99", "50", "49", "100", "32", "12/31/99",
	"2026-11-24T20:05:04.000+05:30", "2026-11-24T20:05:04-0800", "Thu, 01 Jan 1970 00:00:00 GMT-0500", "1970-01-01T00:00:00.000+23:59",
	"Jan 1 2026 12:00 am", "Jan 1 2026 12:00 pm", "Jan 1 2026 13:00 pm", "1 Jan 2026 EST", "1 Jan 2026 PDT", "(comment) Jan 2 2026", "Jan (x) 3 2026",
	"2026-1-5", "2026-01-5", "2026/1/5 10:20:30.5", "10:20:30 2026/1/5", "2026-11-24T20:05:04.Z", "2026-11-24T20:05:04,5Z", "Z 2026", "2026 Z",
	"Sat Nov 28 2026", "28 november 2026", "novembre 28 2026", "2026-11-24t20:05:04Z", "T10:00", "2026T10:00Z", "2026-11T10:00Z", "+2026-01-01",
	"-002026-01-01T00:00:00Z", "+275760-09-13T00:00:00.000Z", "+275760-09-13T00:00:00.001Z", "-271821-04-20T00:00:00.000Z", "-271821-04-19T23:59:59.999Z",
	"2026-11-24T20:05:04+24:00", "2026-11-24T20:05:04+23:60", "GMT+2 Jan 1 2026", "Jan 1 2026 GMT+2", "Jan 1 2026 GMT+02", "Jan 1 2026 GMT+123", "Jan 1 2026 GMT+12345",
	"Jan 1 2026 10:00 GMT-5:30", "Jan 1 2026 10:00 +5", "Jan 1 2026 10:00 -", "1:2:3 1/2/2026", "1::2 1/2/2026", "12/32/2026", "13/12/2026", "0/1/2026", "1 2 3 4",
	"2026-11-24T20:05:04.000Z)", "Jan 1 2026 10:00:00.123456", "Jan 1 2026 10.30", "Jan 1 2026 10:00:00 am", "Jan 1 2026 00:00 am", "2026.01.02", "1.2.2026",
	"\u00a02026-01-01", "2026-01-01\u3000", "Janvier 1 2026", "1e3", "0x10", "Infinity", "2026-02-29", "2024-02-29", "1900-02-29T00:00:00Z", "2000-02-29",
	"24:00 Jan 1 2026", "24:01 Jan 1 2026", "Jan 1, 2026, 10:00:00 AM", "January 1 2026 10:00:00 GMT+0100 (CET)", "2026-01-01T00:00:00.000Z\n"];
let seed = 7;
const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
const pick = (a) => a[Math.floor(rnd() * a.length)];
const parts = ["2026", "11", "24", "-", "/", ":", " ", "T", "Z", "z", "GMT", "UTC", "+", "01", "00", "05", ".", "123", "Nov", "pm", "am", "(x)", ",", "1", "31", "99", "EST", "t", "0000", "2"];
const gen = [];
for (let i = 0; i < 600; i++) {
	let s = "";
	const n = 1 + Math.floor(rnd() * 9);
	for (let k = 0; k < n; k++) s += pick(parts);
	gen.push(s);
}
const cases = [...fixed, ...gen].map((s) => { const t = new Date(s).getTime(); return [s, Number.isNaN(t) ? null : t]; });
writeFileSync(process.argv[2], JSON.stringify({ node: process.version, tz: "UTC", cases }) + "\n");
console.log(`${cases.length} strings, ${cases.filter((c) => c[1] !== null).length} dates`);
