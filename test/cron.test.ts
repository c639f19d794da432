/**
 * Issue 42 class 5: CronJob schedules as the API server reads them (config/cron.ts: robfig/cron
 * v3.0.1's ParseStandard, which kubernetes 1.36 vendors and validateScheduleFormat calls), and
 * schedules that cannot work: a run in some years only, backups further apart than their retention.
 * Where Go runs, the parser itself (built from the module proxy, github.com/robfig/cron/v3 v3.0.1)
 * judges the same corpus.
 */
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, it } from "node:test";
import { cronLongestGapDays, parseCron } from "../config/cron";
import { configProblems as problems } from "./configProblems";

const EDGES = [
    "0 3 * * *", "0 3 * * 7", "0 3 * * 0-7", "0 3 * * SUN-SAT", "0 3 * * sat", "0 3 * * Sun,7", "0 3 * * 6", "0 3 * * 5-1", "0 3 * * */0", "0 3 * * */7",
    "0 3 * 13 *", "0 3 * 0 *", "0 3 0 * *", "0 3 32 * *", "60 3 * * *", "0 24 * * *", "0 +3 * * *", "0 -3 * * *", "0 3-+5 * * *", "0 3 * * -0",
    "0 3 1,,2 * *", "0 3 , * *", "0 3 *-5 * *", "0 3 5-* * *", "0 3 1-2-3 * *", "0 3 */2/3 * *", "0 3 ? * ?", "*/99999999999999999999 * * * *", "*/9223372036854775807 * * * *",
    "0 3 * JAN-DEC MON-FRI", "0 3 * jan-Mar *", "0 3 * FOO *", "0 3 * * L", "0 3 L * *", "0 3 * * 1#2", "0 3 * *", "0 3 * * * *", "TZ=UTC 0 3 * * *", "0 3 * * * TZ", "",
    "007 03 * * *", "5/15 * * * *", "0 3 29 2 *", "0 3 31 2 *", "0 3 29 2 MON", "0 3 30-31 2 *",
];

describe("issue 42 class 5: CronJob schedules", () => {
    it("the day of week is 0..6 as robfig/cron v3.0.1 bounds it: 7 is refused, naming the key and the parser's reason", () => {
        assert.match(problems({ backupsPostgresSchedule: "0 3 * * 7" }), /ops:backupsPostgresSchedule: "0 3 \* \* 7": day of week field: end of range \(7\) above maximum \(6\): 7; expected a five-field cron schedule/);
        assert.match(problems({ bookingBackupSchedule: "0 3 * * 5-1" }), /ops:bookingBackupSchedule: "0 3 \* \* 5-1": day of week field: beginning of range \(5\) beyond end of range \(1\)/);
        assert.match(problems({ backupsRedisSchedule: "*/99999999999999999999 * * * *" }), /failed to parse int from 99999999999999999999/);
        assert.equal(problems({ backupsPostgresSchedule: "0 +3 * * SUN-SAT" }), "", "the parser takes a sign and names");
        assert.match(problems({ backupsPostgresSchedule: "@daily" }), /"@daily": a descriptor \(@daily\); write the five fields instead/, "valid for the API server, refused here with the form to write");
    });

    it("a schedule that fires in some years only (February 29) is refused; one that fires every year passes", () => {
        assert.match(problems({ backupsPostgresSchedule: "0 3 29 2 *", backupsRetentionDays: 0 }), /ops:backupsPostgresSchedule: "0 3 29 2 \*" fires only in some years: up to 2921 days apart/);
        const gap = (s: string) => cronLongestGapDays(parseCron(s) as Exclude<ReturnType<typeof parseCron>, string>);
        assert.equal(gap("0 3 29 2 *"), 2921, "2096 -> 2104: 2100 is no leap year");
        assert.equal(gap("0 3 29 * MON"), 7, "day of month and day of week both restricted: either matches");
        assert.ok(gap("0 3 29 2 MON")! <= 366, "February 29 or the Mondays of February: every year");
        assert.equal(gap("0 3 1 1 *"), 366);
        assert.equal(gap("0 3 * * *"), 1);
        assert.equal(gap("0 3 31 2 *"), undefined);
    });

    it("a backup schedule whose runs are further apart than the retention is refused: each run would delete the one before", () => {
        assert.match(problems({ backupsWorkflowSchedule: "0 2 1 * *" }), /ops:backupsWorkflowSchedule: "0 2 1 \* \*" runs up to 31 days apart, but each successful run deletes the backups older than backupsRetentionDays \(7\)/);
        assert.equal(problems({ backupsWorkflowSchedule: "0 2 1 * *", backupsRetentionDays: 62 }), "");
        assert.equal(problems({ backupsWorkflowSchedule: "0 2 * * 0" }), "", "weekly with a 7-day retention keeps the run before");
        assert.match(problems({ gitopsUptimeMonitorBackupSchedule: "0 4 * * 0", backupsRetentionDays: 3 }), /ops:gitopsUptimeMonitorBackupSchedule: "0 4 \* \* 0" runs up to 7 days apart/);
    });

    it("agrees with robfig/cron v3.0.1's ParseStandard on every schedule of the corpus (where Go runs)", (t) => {
        const go = spawnSync("go", ["version"], { encoding: "utf8" });
        if (go.status !== 0) {
            if (process.env.CI === "true") assert.fail("go is not on PATH: the parser the API server uses cannot be compared");
            t.skip("go is not on PATH: the parser the API server uses is not compared");
            return;
        }
        const bin = robfigOracle();
        const corpus = [...EDGES, ...generated(1500)];
        const verdicts = execFileSync(bin, { input: corpus.join("\n") + "\n", encoding: "utf8" }).split("\n").slice(0, corpus.length);
        const differ = corpus.filter((s, i) => (verdicts[i] === "ok") !== (typeof parseCron(s) !== "string"));
        assert.deepEqual(differ, [], differ.map((s) => `${JSON.stringify(s)}: robfig ${verdicts[corpus.indexOf(s)]}, here ${JSON.stringify(parseCron(s))}`).join("\n"));
    });
});

/** Random schedules from the parts robfig's grammar has (values in and out of bounds, names, ranges, steps, lists, stars). */
function generated(n: number): string[] {
    let seed = 42;
    const rand = (k: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % k);
    const atoms = ["*", "?", "0", "1", "5", "6", "7", "12", "13", "23", "24", "29", "31", "32", "59", "60", "+2", "-1", "mon", "SAT", "sun", "jan", "Dec", "feb", "x", ""];
    const atom = () => atoms[rand(atoms.length)];
    const range = () => [atom(), `${atom()}-${atom()}`, `${atom()}/${atom()}`, `${atom()}-${atom()}/${atom()}`][rand(4)];
    const fieldOf = () => Array.from({ length: 1 + rand(3) }, range).join(",");
    return Array.from({ length: n }, () => Array.from({ length: 5 }, fieldOf).join(" "));
}

/** The parser the API server uses, built once per version into the Go build cache's neighbourhood. */
function robfigOracle(): string {
    const dir = path.join(process.env.XDG_CACHE_HOME ?? path.join(os.homedir(), ".cache"), "ops-env", "robfig-cron-v3.0.1");
    const bin = path.join(dir, "parse");
    if (fs.existsSync(bin)) return bin;
    fs.mkdirSync(dir, { recursive: true });
    const work = fs.mkdtempSync(path.join(dir, "src-"));
    fs.writeFileSync(path.join(work, "go.mod"), "module cronoracle\n\ngo 1.21\n\nrequire github.com/robfig/cron/v3 v3.0.1\n");
    fs.writeFileSync(path.join(work, "main.go"), [
        "package main",
        'import ("bufio"; "fmt"; "os"; "strings"; "github.com/robfig/cron/v3")',
        "func main() {",
        "\tin := bufio.NewScanner(os.Stdin)",
        "\tfor in.Scan() {",
        "\t\tfmt.Println(verdict(in.Text()))",
        "\t}",
        "}",
        "// pkg/apis/batch/validation validateScheduleFormat: the parser (a panic recovered), then no TZ in the schedule.",
        "func verdict(s string) (v string) {",
        "\tdefer func() { if recover() != nil { v = \"refused\" } }()",
        "\tif _, err := cron.ParseStandard(s); err != nil || strings.Contains(s, \"TZ\") { return \"refused\" }",
        "\treturn \"ok\"",
        "}",
        "",
    ].join("\n"));
    execFileSync("go", ["mod", "tidy"], { cwd: work, stdio: "pipe" });
    const tmp = `${bin}.${process.pid}`;
    execFileSync("go", ["build", "-o", tmp, "."], { cwd: work, stdio: "pipe" });
    fs.renameSync(tmp, bin);
    fs.rmSync(work, { recursive: true, force: true });
    return bin;
}
