/**
 * Mutation test of the workflow security model (test/workflowSecurity.ts): each insecure change
 * below is applied to a copy of the workflows (or of the script they run) and must be reported.
 * The real files must report nothing, so each finding is caused by its change. A change whose
 * text no longer matches the workflows fails too, instead of passing unapplied.
 */
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, it } from "node:test";
import { securityViolations, Workflows } from "./workflowSecurity";

const ROOT = path.resolve(__dirname, "..");
const read = (dir: string, re: RegExp): Workflows => Object.fromEntries(fs.readdirSync(path.join(ROOT, dir)).filter((f) => re.test(f)).map((f) => [f, fs.readFileSync(path.join(ROOT, dir, f), "utf8")]));
const WORKFLOWS = read(".github/workflows", /\.ya?ml$/);
const SCRIPTS = read(".github/scripts", /\.sh$/);

interface Mutation {
    what: string;
    file: string;
    from: string | RegExp;
    to: string;
    /** Which occurrence, when the text is in several jobs (default: the only one). */
    nth?: number;
    /** A word the finding must contain, so it is caught for the right reason. */
    expect: RegExp;
    /** A second edit of the same file. */
    and?: { from: string | RegExp; to: string; nth?: number };
}

const PR = "pull-request.yml";
const DEPLOY = "deploy.yml";
const DRIFT = "drift.yml";
const PROD = "preview-prod.yml";

const MUTATIONS: Mutation[] = [
    // The ten changes of issue 23.
    { what: "fork guard neutered", file: PROD, from: "github.event.workflow_run.head_repository.full_name == github.repository", to: "github.event.workflow_run.head_repository.full_name != ''", expect: /from a fork/ },
    { what: "pull request title in a script", file: PR, from: '          set +e\n', to: '          set +e\n          echo "${{ github.event.pull_request.title }}"\n', expect: /template injection/ },
    { what: "a long-lived token as secrets['…']", file: PROD, from: "          comment-on-summary: true # the preview in the job summary; no token needed\n          suppress-outputs: true\n", to: "          comment-on-summary: true # the preview in the job summary; no token needed\n          suppress-outputs: true\n        env:\n          PULUMI_ACCESS_TOKEN: ${{ secrets['PULUMI_ACCESS_TOKEN'] }}\n", expect: /PULUMI_ACCESS_TOKEN/ },
    { what: "a secret echoed to the log", file: DEPLOY, from: '          umask 077\n', nth: 1, to: '          umask 077\n          echo "kubeconfig: $KUBECONFIG_CONTENT"\n', expect: /print a secret/ },
    { what: "the GitHub token handed to the program", file: DEPLOY, from: 'github-token: "" #', nth: 1, to: "github-token: ${{ github.token }} #", expect: /GITHUB_TOKEN/ },
    { what: "the main-only guard turned into a warning", file: DEPLOY, from: 'echo "::error::deploy runs from main only, not from $REF"\n            exit 1', to: 'echo "::warning::deploy runs from main only, not from $REF"', expect: /another ref/ },
    { what: "drift given the production environment", file: DRIFT, from: "environment: drift-dev", to: "environment: production", expect: /production/ },
    { what: "the comment finder accepting any author", file: PR, from: 'comments.find((c) => c.user?.type === "Bot" && c.user?.login === author && typeof c.body === "string" && c.body.startsWith(marker + "\\n"))', to: 'comments.find((c) => c.body?.includes(marker))', expect: /comment finder/ },
    { what: "credentials persisted by checkout", file: DEPLOY, from: "persist-credentials: false", nth: 3, to: "persist-credentials: true", expect: /persist-credentials/ },
    { what: "a per-run concurrency group", file: DEPLOY, from: "group: deploy-prod", to: "group: deploy-prod-${{ github.run_id }}", expect: /every run|concurrency/ },

    // And the other ways back to the old design.
    { what: "the prod preview without a reviewer (preview-dev's environment)", file: PROD, from: "name: preview-prod", to: "name: preview-dev", expect: /stacks dev|decrypt prod/ },
    { what: "the prod preview in the dev team's stacks", file: PR, from: "stack-name: ${{ format('{0}/dev', vars.PULUMI_ORG) }}", to: "stack-name: ${{ format('{0}/prod', vars.PULUMI_ORG) }}", expect: /pulumi preview of prod/ },
    { what: "a dynamic secrets[matrix.x] lookup", file: DRIFT, from: "${{ secrets.KUBECONFIG }}", nth: 1, to: "${{ secrets[format('KUBECONFIG_{0}', 'DEV')] }}", expect: /by an expression/ },
    { what: "pull-requests: write in the job that runs the pull request's code", file: PR, from: "    permissions:\n      contents: read\n    outputs:", to: "    permissions:\n      contents: read\n      pull-requests: write\n    outputs:", expect: /write-scoped GITHUB_TOKEN|pull-requests: write/ },
    { what: "id-token: write in the job that runs npm ci and the render", file: DEPLOY, from: "    permissions:\n      contents: read\n    steps:", nth: 1, to: "    permissions:\n      contents: read\n      id-token: write\n    steps:", expect: /OpenID Connect/ },
    { what: "install scripts in the credentialed deploy job", file: DEPLOY, from: "npm ci --ignore-scripts", nth: 2, to: "npm ci", expect: /install scripts/ },
    { what: "install scripts in the prod preview", file: PR, from: "npm ci --ignore-scripts", nth: 2, to: "npm ci", expect: /install scripts/ },
    { what: "the render back in the credentialed job", file: DEPLOY, from: "      - run: npm ci --ignore-scripts\n      - name: still the head of main", nth: 2, to: "      - run: npm ci --ignore-scripts\n      - run: npm run render -- --stack prod\n      - name: still the head of main", expect: /render|repository's code|npm run/ },
    { what: "the conformance token in the job that runs npm ci", file: PR, from: "      - name: the shared conformance data (when conformance-data ran)", to: "      - uses: actions/checkout@3d3c42e5aac5ba805825da76410c181273ba90b1 # v7.0.1\n        with:\n          repository: ${{ vars.CONFORMANCE_REPOSITORY }}\n          token: ${{ secrets.CONFORMANCE_READ_TOKEN }}\n          path: shared\n          persist-credentials: false\n      - name: the shared conformance data (when conformance-data ran)", expect: /CONFORMANCE_READ_TOKEN/ },
    { what: "Dependabot gets the dev preview", file: PR, from: "github.event.pull_request.head.repo.full_name == github.repository && github.event.pull_request.user.type == 'User' && !endsWith(github.actor, '[bot]')\n    runs-on: ubuntu-24.04\n    timeout-minutes: 30\n    environment: preview-dev", to: "github.event.pull_request.head.repo.full_name == github.repository\n    runs-on: ubuntu-24.04\n    timeout-minutes: 30\n    environment: preview-dev", expect: /dependabot/ },
    { what: "a workflow-level deploy lock, held while prod waits for approval", file: DEPLOY, from: "permissions: {}\n\njobs:", to: "permissions: {}\n\nconcurrency:\n  group: deploy\n  cancel-in-progress: false\n\njobs:", expect: /waits for approval/ },
    { what: "the approval job holding the prod lock", file: DEPLOY, from: "    environment: production-approval\n", to: "    environment: production-approval\n    concurrency:\n      group: deploy-prod\n      cancel-in-progress: false\n", expect: /waits for a reviewer/ },
    { what: "prod deployed without the approval job", file: DEPLOY, from: "    needs: approve-prod", to: "    needs: up-dev", expect: /approval/ },
    { what: "the head-of-main check turned into a warning", file: DEPLOY, from: /(\$SHA is no longer the head of main[^\n]*\n)\s+exit 1\n/, nth: 2, to: "$1", expect: /old commit/ },
    { what: "the head-of-main check removed", file: DEPLOY, from: /      - name: still the head of main\n(?:        .*\n|          .*\n)+?(?=      # Inputs)/, to: "", expect: /head of main/ },
    { what: "drift without a concurrency group", file: DRIFT, from: "concurrency:\n  group: drift\n  cancel-in-progress: false\n", to: "", expect: /concurrency group/ },
    { what: "a remote manifest applied by its tag", file: "e2e.yml", from: "        run: .github/scripts/e2e-manifests.sh ingress", to: "        run: kubectl apply -f https://raw.githubusercontent.com/kubernetes/ingress-nginx/controller-v1.12.1/deploy/static/provider/kind/deploy.yaml", expect: /fetches a URL/ },
    { what: "a script download pinned by a tag", file: "e2e-manifests.sh", from: "INGRESS_NGINX=64780b1fed3af99f4eccbc3fdad7ad785e8a83b6", to: "INGRESS_NGINX=controller-v1.12.1", expect: /not a commit/ },
    { what: "a script download without its checksum", file: "e2e-manifests.sh", from: "crd-issuers.yaml ba2c503318f1f14f63fa7ad61589e4d7718c09d82eb39bbc9fd78c8d0fac1b6b", to: "crd-issuers.yaml -", expect: /sha256/ },
    { what: "pull_request_target", file: PR, from: "on:\n  pull_request:\n", to: "on:\n  pull_request_target:\n", expect: /pull_request_target/ },
    { what: "a deploy job for any ref", file: DEPLOY, from: "    if: github.ref == 'refs/heads/main'\n    runs-on: ubuntu-24.04\n    timeout-minutes: 60", to: "    runs-on: ubuntu-24.04\n    timeout-minutes: 60", expect: /another ref/ },
    { what: "the guard job no longer needed by the deploy jobs", file: DEPLOY, from: "    needs: main-only\n", to: "", and: { from: "needs: [main-only, render]", to: "needs: render" }, expect: /main-only/ },
    { what: "set -x in a step holding a secret", file: DRIFT, from: "          umask 077\n", nth: 2, to: "          set -x\n          umask 077\n", expect: /set -x/ },
    { what: "the preview's job token given write access to pull requests for a comment", file: PROD, from: "      id-token: write # exchanged for a short-lived Pulumi token of the environment's team (Stack Read on prod)", to: "      id-token: write # exchanged for a short-lived Pulumi token of the environment's team (Stack Read on prod)\n      pull-requests: write", expect: /write-scoped GITHUB_TOKEN/ },
    { what: "the kubeconfig in job-level env of the render job", file: DEPLOY, from: "    name: offline render (no credential)\n", to: "    name: offline render (no credential)\n    env:\n      KUBECONFIG_CONTENT: ${{ secrets.KUBECONFIG }}\n", expect: /job env|job-level env/ },
];

function apply(text: string, m: Mutation): string {
    const re = typeof m.from === "string" ? new RegExp(m.from.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"), "g") : new RegExp(m.from.source, "g");
    const hits = [...text.matchAll(re)];
    if (m.nth === undefined) assert.equal(hits.length, 1, `${m.what}: the text to change is not exactly once in ${m.file} (${hits.length} times)`);
    const hit = hits[(m.nth ?? 1) - 1];
    assert.ok(hit, `${m.what}: occurrence ${m.nth} not in ${m.file}`);
    if (typeof m.from === "string") return text.slice(0, hit.index) + m.to + text.slice(hit.index! + hit[0].length);
    // The first match from this occurrence on is this occurrence (a lookahead may need the text after it).
    return text.slice(0, hit.index) + text.slice(hit.index).replace(new RegExp(m.from.source), m.to);
}

function applyAll(text: string, m: Mutation): string {
    const once = apply(text, m);
    return m.and ? apply(once, { ...m, ...m.and, and: undefined }) : once;
}

describe("the workflow security model, by mutation", () => {
    it("finds nothing in the real workflows and scripts", async () => {
        assert.deepEqual(await securityViolations(WORKFLOWS, SCRIPTS), []);
    });

    for (const m of MUTATIONS) {
        it(`catches: ${m.what}`, async () => {
            const workflows = { ...WORKFLOWS };
            const scripts = { ...SCRIPTS };
            const target = m.file in workflows ? workflows : scripts;
            assert.ok(m.file in target, `${m.file} is not a workflow or script`);
            target[m.file] = applyAll(target[m.file], m);
            const found = await securityViolations(workflows, scripts);
            assert.ok(found.length > 0, `${m.what}: not caught`);
            assert.ok(found.some((f) => m.expect.test(f)), `${m.what}: caught only for other reasons:\n${found.join("\n")}`);
        });
    }
});
