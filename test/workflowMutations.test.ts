/**
 * Mutation test of the workflow security model (test/workflowSecurity.ts): each insecure change
 * below is applied to a copy of the workflows (or of the script they run, or of the settings the
 * model holds, ENVIRONMENTS) and must be reported. A change counts as caught only for its own
 * reason: a finding of the change's class (the `[class]` every finding starts with), in the file
 * and job it names, whose text matches. The real files report nothing, and edits that change no
 * behaviour (a harmless step inserted anywhere, every step renamed, comments added) report nothing
 * either, so no catch comes from a text or a step number that merely moved. A change whose text
 * no longer matches the workflows fails too, instead of passing unapplied.
 */
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, it } from "node:test";
import { ENVIRONMENTS, Environments, FINDING_CLASSES, securityViolations, Workflows } from "./workflowSecurity";

const ROOT = path.resolve(__dirname, "..");
const read = (dir: string, re: RegExp): Workflows => Object.fromEntries(fs.readdirSync(path.join(ROOT, dir)).filter((f) => re.test(f)).map((f) => [f, fs.readFileSync(path.join(ROOT, dir, f), "utf8")]));
const WORKFLOWS = read(".github/workflows", /\.ya?ml$/);
const SCRIPTS = read(".github/scripts", /\.sh$/);

type FindingClass = (typeof FINDING_CLASSES)[number];
interface Mutation {
    /** The class of the finding that must catch it. */
    cls: FindingClass;
    what: string;
    /** A workflow or script, or "settings" (then `settings` changes ENVIRONMENTS). */
    file: string;
    /** Where the finding must be, when not in `file` (e.g. "pull-request.yml job comment"). */
    at?: string;
    settings?: (envs: Environments) => void;
    from?: string | RegExp;
    to?: string;
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
    { cls: "fork", what: "fork guard neutered", file: PROD, from: "github.event.workflow_run.head_repository.full_name == github.repository", to: "github.event.workflow_run.head_repository.full_name != ''", expect: /from a fork/ },
    { cls: "injection", what: "pull request title in a script", file: PR, from: '          set +e\n', to: '          set +e\n          echo "${{ github.event.pull_request.title }}"\n', expect: /template injection/ },
    { cls: "secret", what: "a long-lived token as secrets['…']", file: PROD, from: "          KUBECONFIG: ${{ runner.temp }}/kubeconfig", to: "          PULUMI_ACCESS_TOKEN: ${{ secrets['PULUMI_ACCESS_TOKEN'] }}\n          KUBECONFIG: ${{ runner.temp }}/kubeconfig", expect: /PULUMI_ACCESS_TOKEN/ },
    { cls: "log", what: "a secret echoed to the log", file: DEPLOY, from: '          umask 077\n', nth: 1, to: '          umask 077\n          echo "kubeconfig: $KUBECONFIG_CONTENT"\n', expect: /print a secret/ },
    { cls: "token", what: "the GitHub token handed to the program", file: DEPLOY, from: 'github-token: "" #', nth: 1, to: "github-token: ${{ github.token }} #", expect: /GITHUB_TOKEN/ },
    { cls: "ref", what: "the main-only guard turned into a warning", file: DEPLOY, from: 'echo "::error::deploy runs from main only, not from $REF"\n            exit 1', to: 'echo "::warning::deploy runs from main only, not from $REF"', expect: /another ref/ },
    { cls: "environment", what: "drift given the production environment", file: DRIFT, from: "environment: drift-dev", to: "environment: production", expect: /production/ },
    { cls: "comment", what: "the comment finder accepting any author", file: PR, from: 'comments.find((c) => c.user?.type === "Bot" && c.user?.login === author && typeof c.body === "string" && c.body.startsWith(marker + "\\n"))', to: 'comments.find((c) => c.body?.includes(marker))', expect: /comment finder/ },
    { cls: "token", what: "credentials persisted by checkout", file: DEPLOY, from: "persist-credentials: false", nth: 3, to: "persist-credentials: true", expect: /persist-credentials/ },
    { cls: "concurrency", what: "a per-run concurrency group", file: DEPLOY, from: "group: deploy-prod", to: "group: deploy-prod-${{ github.run_id }}", expect: /every run|concurrency/ },

    // And the other ways back to the old design.
    { cls: "stack", what: "the prod preview without a reviewer (preview-dev's environment)", file: PROD, from: "name: preview-prod", to: "name: preview-dev", expect: /stacks dev|decrypt prod/ },
    { cls: "stack", what: "the prod preview in the dev team's stacks", file: PR, from: "stack-name: ${{ format('{0}/dev', vars.PULUMI_ORG) }}", to: "stack-name: ${{ format('{0}/prod', vars.PULUMI_ORG) }}", expect: /pulumi preview of prod/ },
    { cls: "secret", what: "a dynamic secrets[matrix.x] lookup", file: DRIFT, from: "${{ secrets.KUBECONFIG }}", nth: 1, to: "${{ secrets[format('KUBECONFIG_{0}', 'DEV')] }}", expect: /by an expression/ },
    { cls: "token", what: "pull-requests: write in the job that runs the pull request's code", file: PR, from: "    permissions:\n      contents: read\n    outputs:", to: "    permissions:\n      contents: read\n      pull-requests: write\n    outputs:", expect: /write-scoped GITHUB_TOKEN|pull-requests: write/ },
    { cls: "oidc", what: "id-token: write in the job that runs npm ci and the render", file: DEPLOY, from: "    permissions:\n      contents: read\n    steps:", nth: 1, to: "    permissions:\n      contents: read\n      id-token: write\n    steps:", expect: /job render: \[oidc\] id-token: write outside an environment/ },
    { cls: "install", what: "install scripts in the credentialed deploy job", file: DEPLOY, from: "      - run: npm ci --ignore-scripts\n", nth: 2, to: "      - run: npm ci\n", expect: /job up-dev: \[install\] .*install scripts/ },
    { cls: "install", what: "install scripts in the prod preview", file: PROD, from: "      - run: npm ci --ignore-scripts\n", to: "      - run: npm ci\n", expect: /job preview-prod: \[install\] .*install scripts/ },
    { cls: "code", what: "the render back in the credentialed job", file: DEPLOY, from: "      - run: npm ci --ignore-scripts\n      - name: still the head of main", nth: 2, to: "      - run: npm ci --ignore-scripts\n      - run: npm run render -- --stack prod\n      - name: still the head of main", expect: /render|repository's code|npm run/ },
    { cls: "secret", what: "the conformance token in the job that runs npm ci", file: PR, from: "      - name: the shared conformance data (when conformance-data ran)", to: "      - uses: actions/checkout@3d3c42e5aac5ba805825da76410c181273ba90b1 # v7.0.1\n        with:\n          repository: ${{ vars.CONFORMANCE_REPOSITORY }}\n          token: ${{ secrets.CONFORMANCE_READ_TOKEN }}\n          path: shared\n          persist-credentials: false\n      - name: the shared conformance data (when conformance-data ran)", expect: /CONFORMANCE_READ_TOKEN/ },
    { cls: "fork", what: "Dependabot gets the dev preview", file: PR, from: "github.event.pull_request.head.repo.full_name == github.repository && github.event.pull_request.user.type == 'User' && !endsWith(github.actor, '[bot]')\n    runs-on: ubuntu-24.04\n    timeout-minutes: 30\n    environment: preview-dev", to: "github.event.pull_request.head.repo.full_name == github.repository\n    runs-on: ubuntu-24.04\n    timeout-minutes: 30\n    environment: preview-dev", expect: /dependabot/ },
    { cls: "concurrency", what: "a workflow-level deploy lock, held while prod waits for approval", file: DEPLOY, from: "permissions: {}\n\njobs:", to: "permissions: {}\n\nconcurrency:\n  group: deploy\n  cancel-in-progress: false\n\njobs:", expect: /waits for approval/ },
    { cls: "concurrency", what: "the approval job holding the prod lock", file: DEPLOY, from: "    environment: production-approval\n", to: "    environment: production-approval\n    concurrency:\n      group: deploy-prod\n      cancel-in-progress: false\n", expect: /waits for a reviewer/ },
    { cls: "approval", what: "prod deployed without the approval job", file: DEPLOY, from: "    needs: approve-prod", to: "    needs: up-dev", expect: /approval/ },
    { cls: "ref", what: "the head-of-main check turned into a warning", file: DEPLOY, from: /(\$SHA is no longer the head of main[^\n]*\n)\s+exit 1\n/, nth: 2, to: "$1", expect: /old commit/ },
    { cls: "ref", what: "the head-of-main check removed", file: DEPLOY, from: /      - name: still the head of main\n(?:        .*\n|          .*\n)+?(?=      # Inputs)/, to: "", expect: /head of main/ },
    { cls: "concurrency", what: "drift without a concurrency group", file: DRIFT, from: "concurrency:\n  group: drift\n  cancel-in-progress: false\n", to: "", expect: /concurrency group/ },
    { cls: "fetch", what: "a remote manifest applied by its tag", file: "e2e.yml", from: "        run: .github/scripts/e2e-manifests.sh ingress", to: "        run: kubectl apply -f https://raw.githubusercontent.com/kubernetes/ingress-nginx/controller-v1.12.1/deploy/static/provider/kind/deploy.yaml", expect: /fetches a URL/ },
    { cls: "checksum", what: "a script download pinned by a tag", file: "e2e-manifests.sh", from: "INGRESS_NGINX=64780b1fed3af99f4eccbc3fdad7ad785e8a83b6", to: "INGRESS_NGINX=controller-v1.12.1", expect: /not a commit/ },
    { cls: "checksum", what: "a script download without its checksum", file: "e2e-manifests.sh", from: "crd-issuers.yaml ba2c503318f1f14f63fa7ad61589e4d7718c09d82eb39bbc9fd78c8d0fac1b6b", to: "crd-issuers.yaml -", expect: /sha256/ },
    { cls: "trigger", what: "pull_request_target", file: PR, from: "on:\n  pull_request:\n", to: "on:\n  pull_request_target:\n", expect: /pull_request_target/ },
    { cls: "ref", what: "a drift job for any ref", file: DRIFT, from: "    if: github.ref == 'refs/heads/main'\n", nth: 2, to: "", expect: /job drift-prod: \[ref\] runs in drift-prod for another ref/ },
    { cls: "ref", what: "the guard job no longer needed by the deploy jobs", file: DEPLOY, from: "    needs: main-only\n", to: "", and: { from: "needs: [main-only, render]", to: "needs: render" }, expect: /main-only/ },
    { cls: "log", what: "set -x in a step holding a secret", file: DRIFT, from: "          umask 077\n", nth: 2, to: "          set -x\n          umask 077\n", expect: /set -x/ },
    { cls: "token", what: "the preview's job token given write access to pull requests for a comment", file: PROD, from: "      pull-requests: read # the pull request, read again after the approval", to: "      pull-requests: write # the pull request, and a comment", expect: /job preview-prod: \[token\] a job with a write-scoped GITHUB_TOKEN runs code/ },
    { cls: "secret", what: "the kubeconfig in job-level env of the render job", file: DEPLOY, from: "    name: offline render (no credential)\n", to: "    name: offline render (no credential)\n    env:\n      KUBECONFIG_CONTENT: ${{ secrets.KUBECONFIG }}\n", expect: /job env|job-level env/ },

    // Issue 31: data crossing from untrusted code to a credential, refs, failures. Each is caught
    // for its class (the finding starts with it), not for another reason.
    // [artifact]
    { cls: "artifact", what: "the images-lock artifact downloaded into the workspace", file: PROD, from: "          path: ${{ runner.temp }}/images-lock\n", to: "          path: .\n", expect: /\[artifact\] step \d+ downloads images-lock \(written by another run .*\) into the workspace/ },
    { cls: "artifact", what: "the images-lock artifact copied in without its check", file: PROD, from: '        run: npm run -s images:artifact -- "$RUNNER_TEMP/images-lock" images.lock.json\n', to: '        run: cp "$RUNNER_TEMP/images-lock/images.lock.json" images.lock.json\n', expect: /\[artifact\] images-lock .* without its check/ },
    { cls: "artifact", what: "every artifact of the pull request's run downloaded", file: PROD, from: "          name: images-lock\n          path: ${{ runner.temp }}/images-lock\n", to: "          path: ${{ runner.temp }}/images-lock\n", expect: /\[artifact\] step \d+ downloads every artifact/ },
    { cls: "artifact", what: "the diff job's lock applied in the dev preview's workspace", file: PR, from: "      - run: npm ci --ignore-scripts\n      # pulumi/actions v7.0.0 downloads", to: "      - run: npm ci --ignore-scripts\n      - uses: actions/download-artifact@3e5f45b2cfb9172054b4087a40e8e0b5a5461e7c # v8.0.1\n        with:\n          name: images-lock\n          path: .\n      # pulumi/actions v7.0.0 downloads", expect: /job preview-dev: \[artifact\] step \d+ downloads images-lock \(written by job diff after .*\) into the workspace/ },
    { cls: "artifact", what: "the comment job posting the pull request's raw report", file: PR, from: "          name: comment-body\n          path: ${{ runner.temp }}/comment-body\n", to: "          name: offline-diff\n          path: ${{ runner.temp }}/comment-body\n", expect: /\[artifact\] offline-diff \(written by job diff after .*\) is used by step 2 without its check/ },
    // [cache]
    { cls: "cache", what: "setup-node's automatic cache back on in the prod deployment", file: DEPLOY, from: "          package-manager-cache: false # no cache another job's install scripts could have written\n", nth: 2, to: "", expect: /\[cache\] step 2 restores the npm cache \(setup-node turns caching on by itself/ },
    { cls: "cache", what: "cache: npm in the dev preview", file: PR, from: "          package-manager-cache: false # no cache another job's install scripts could have written\n      # The lock file's packages", to: "          cache: npm\n      # The lock file's packages", expect: /job preview-dev: \[cache\] step 2 restores the npm cache \(setup-node cache: npm\), which preview-prod\.yml job preview-prod, which runs .* in main's cache scope can write/ },
    { cls: "cache", what: "actions/cache in the prod drift job", file: DRIFT, from: "      - run: npm ci --ignore-scripts\n", nth: 2, to: "      - uses: actions/cache@0400d5f644dc74513175e3cd8d07132dd4860809 # v4.2.4\n        with:\n          path: node_modules\n          key: modules-${{ hashFiles('package-lock.json') }}\n      - run: npm ci --ignore-scripts\n", expect: /job drift-prod: \[cache\] step \d+ restores the cache modules-/ },
    // [env-file]
    { cls: "env-file", what: "node_modules/.bin put on $GITHUB_PATH before the prod deployment", file: DEPLOY, from: "      - name: the resolved digests are the committed ones\n", to: "      - run: echo \"$GITHUB_WORKSPACE/node_modules/.bin\" >> \"$GITHUB_PATH\"\n      - name: the resolved digests are the committed ones\n", expect: /job up-prod: \[env-file\] step \d+ adds to \$GITHUB_PATH/ },
    { cls: "env-file", what: "NODE_OPTIONS from the downloaded artifact into $GITHUB_ENV", file: PROD, from: "      - name: read-only kubeconfig\n", to: "      - run: echo \"NODE_OPTIONS=--require $RUNNER_TEMP/images-lock/hook.js\" >> \"$GITHUB_ENV\"\n      - name: read-only kubeconfig\n", expect: /\[env-file\] step \d+ writes \$GITHUB_ENV from something other than a constant path/ },
    { cls: "env-file", what: "a $GITHUB_ENV value read from a workspace file in drift", file: DRIFT, from: '          echo "KUBECONFIG=$RUNNER_TEMP/kubeconfig" >> "$GITHUB_ENV"\n', nth: 2, to: '          echo "KUBECONFIG=$RUNNER_TEMP/kubeconfig" >> "$GITHUB_ENV"\n          echo "PULUMI_HOME=$(cat .pulumi-home)" >> "$GITHUB_ENV"\n', expect: /job drift-prod: \[env-file\] .*PULUMI_HOME/ },
    // [job-output]
    { cls: "job-output", what: "the dev preview gated on an output of the diff job", file: PR, from: "    timeout-minutes: 30\n    environment: preview-dev\n", to: "    timeout-minutes: 30\n    needs: diff\n    environment: preview-dev\n", and: { from: "github.event.pull_request.head.repo.full_name == github.repository && github.event.pull_request.user.type == 'User' && !endsWith(github.actor, '[bot]')\n    runs-on: ubuntu-24.04\n    timeout-minutes: 30", to: "github.event.pull_request.head.repo.full_name == github.repository && github.event.pull_request.user.type == 'User' && !endsWith(github.actor, '[bot]') && needs.diff.outputs.report == 'ready'\n    runs-on: ubuntu-24.04\n    timeout-minutes: 30" }, expect: /job preview-dev: \[job-output\] needs\.diff\.outputs is written by job diff/ },
    { cls: "job-output", what: "the comment job deciding on the diff job's output", file: PR, from: "    needs: comment-body\n", to: "    needs: [diff, comment-body]\n", and: { from: "needs.comment-body.result == 'success'", to: "needs.diff.outputs.report == 'ready'" }, expect: /job comment: \[job-output\] needs\.diff\.outputs/ },
    // [checkout-ref]
    { cls: "checkout-ref", what: "the prod preview checking out the pull request's branch name", file: PROD, from: "          ref: ${{ github.event.workflow_run.head_sha }}\n", to: "          ref: ${{ github.event.workflow_run.head_branch }}\n", expect: /\[checkout-ref\] step \d+ checks out \$\{\{ github\.event\.workflow_run\.head_branch \}\}/ },
    { cls: "checkout-ref", what: "the prod deployment checking out main by name", file: DEPLOY, from: "          persist-credentials: false\n", nth: 3, to: "          ref: main\n          persist-credentials: false\n", expect: /job up-prod: \[checkout-ref\] step 1 checks out main/ },
    // [dispatch-input]
    { cls: "dispatch-input", what: "a dispatch input naming the commit prod deploys", file: DEPLOY, from: "  workflow_dispatch: {}\n", to: "  workflow_dispatch:\n    inputs:\n      ref:\n        type: string\n", and: { from: "          persist-credentials: false\n", nth: 3, to: "          ref: ${{ inputs.ref }}\n          persist-credentials: false\n" }, expect: /job up-prod: \[dispatch-input\] step 1 checks out \$\{\{ inputs\.ref \}\}/ },
    { cls: "dispatch-input", what: "a dispatch input choosing the stack dev deploys", file: DEPLOY, from: "stack-name: ${{ format('{0}/dev', vars.PULUMI_ORG) }}", to: "stack-name: ${{ format('{0}/{1}', vars.PULUMI_ORG, inputs.stack) }}", expect: /job up-dev: \[dispatch-input\] .*inputs\.stack/ },
    { cls: "dispatch-input", what: "a dispatch input letting drift run off main", file: DRIFT, from: "    if: github.ref == 'refs/heads/main'\n", nth: 1, to: "    if: github.ref == 'refs/heads/main' || github.event.inputs.force == 'true'\n", expect: /job drift-dev: \[dispatch-input\] github\.ref == 'refs\/heads\/main' \|\| github\.event\.inputs\.force/ },
    // [approval]
    { cls: "approval", what: "the prod preview's name no longer showing the commit", file: PROD, from: "    name: pulumi preview (prod) of pull request ${{ needs.pull-request.outputs.number }} at ${{ github.event.workflow_run.head_sha }}, after a reviewer's approval\n", to: "    name: pulumi preview (prod) of pull request ${{ needs.pull-request.outputs.number }}, after a reviewer's approval\n", expect: /\[approval\] the job's name does not show the commit/ },
    { cls: "approval", what: "the prod preview back in the pull request's own workflow", file: PR, from: /\n  # Stack Read on dev: the dev preview[\s\S]*$/, to: "$&\n  preview-prod:\n    name: pulumi preview (prod)\n    if: vars.PULUMI_ORG != '' && github.event.pull_request.head.repo.full_name == github.repository && github.event.pull_request.user.type == 'User' && !endsWith(github.actor, '[bot]')\n    runs-on: ubuntu-24.04\n    timeout-minutes: 30\n    environment: preview-prod\n    permissions:\n      contents: read\n      id-token: write\n    steps:\n      - uses: actions/checkout@3d3c42e5aac5ba805825da76410c181273ba90b1 # v7.0.1\n        with:\n          persist-credentials: false\n      - uses: pulumi/auth-actions@141415910c3beb54e03b48e9057c204c97b956f2 # v2.1.0\n        with:\n          organization: ${{ vars.PULUMI_ORG }}\n          requested-token-type: urn:pulumi:token-type:access_token:team\n          scope: team:${{ vars.PULUMI_TEAM }}\n          token-expiration: 1800\n      - uses: pulumi/actions@8e5e406f4007fca908480587cb9893c07090f58d # v7.0.0\n        with:\n          command: preview\n          stack-name: ${{ format('{0}/prod', vars.PULUMI_ORG) }}\n          github-token: \"\"\n", expect: /job preview-prod: \[approval\] the approved job's definition comes from the pull request's own workflow file/ },
    { cls: "approval", what: "the prod preview's commit checked out without a reviewer (preview-dev's environment)", file: PROD, from: "      name: preview-prod\n", to: "      name: preview-dev\n", expect: /\[approval\] step \d+ checks out a pull request's commit .* no reviewer's approval/ },
    { cls: "approval", what: "the author's own approval accepted (the check removed)", file: PROD, from: /      - name: the approved commit is still the pull request's head, and its author did not approve it\n(?:        .*\n|          .*\n)+?(?=      - uses: actions\/checkout)/, to: "", expect: /\[approval\] no check, before the credential, that the approver is not the pull request's author/ },
    { cls: "approval", what: "the approval check comparing nothing", file: PROD, from: '            if [ "$approver" = "$author" ]; then', to: '            if [ "$approver" = "nobody" ]; then', expect: /\[approval\] the approval check lets the pull request's author approve/ },
    { cls: "fail-open", what: "the approval check passing when the API fails", file: PROD, from: "| .user.login] | join(\" \")')\n", to: "| .user.login] | join(\" \")' || true)\n", and: { from: '          if [ -z "$author" ] || [ -z "$approvers" ]; then', to: '          if false; then' }, expect: /\[fail-open\] the approval check passes when the API (call fails|names no approver)/ },
    // [status]
    { cls: "status", what: "prod deployed even when its approval failed (!cancelled())", file: DEPLOY, from: "    needs: approve-prod\n    if: github.ref == 'refs/heads/main'\n", to: "    needs: approve-prod\n    if: ${{ !cancelled() && github.ref == 'refs/heads/main' }}\n", expect: /job up-prod: \[status\] runs when a job it needs \(approve-prod, up-dev, main-only, render\) failed or was rejected/ },
    { cls: "status", what: "prod deployed always()", file: DEPLOY, from: "    needs: approve-prod\n    if: github.ref == 'refs/heads/main'\n", to: "    needs: approve-prod\n    if: always() && github.ref == 'refs/heads/main'\n", expect: /job up-prod: \[status\] runs when a job it needs/ },
    { cls: "status", what: "continue-on-error on the approval job", file: DEPLOY, from: "    environment: production-approval\n", to: "    environment: production-approval\n    continue-on-error: true\n", expect: /job up-prod: \[status\] needs approve-prod, whose continue-on-error/ },
    { cls: "status", what: "the comment posted whatever the body job did", file: PR, from: "needs.comment-body.result == 'success'", to: "needs.comment-body.result != 'cancelled'", expect: /job comment: \[status\] runs when a job it needs \(comment-body, diff\) failed/ },
    { cls: "status", what: "continue-on-error on the render the deployment needs", file: DEPLOY, from: "      - name: offline render of dev and prod (fails fast on a broken stack)\n", to: "      - name: offline render of dev and prod (fails fast on a broken stack)\n        continue-on-error: true\n", expect: /job render: \[status\] step \d+ has continue-on-error, and job up-dev \(credentialed\) depends on its result/ },
    // [install]
    { cls: "install", what: "npm clean-install in the prod deployment", file: DEPLOY, from: "      - run: npm ci --ignore-scripts\n", nth: 3, to: "      - run: npm clean-install\n", expect: /job up-prod: \[install\] `npm clean-install` \(dependency install scripts\)/ },
    { cls: "install", what: "npm ic in the dev deployment", file: DEPLOY, from: "      - run: npm ci --ignore-scripts\n", nth: 2, to: "      - run: npm ic --ignore-scripts=false\n", expect: /job up-dev: \[install\] `npm ic --ignore-scripts=false`/ },
    { cls: "install", what: "--ignore-scripts undone by --ignore-scripts=false", file: DRIFT, from: "      - run: npm ci --ignore-scripts\n", nth: 1, to: "      - run: npm ci --ignore-scripts --ignore-scripts=false\n", expect: /job drift-dev: \[install\] `npm ci --ignore-scripts --ignore-scripts=false`/ },
    { cls: "install", what: "npm rebuild after the scriptless install", file: DRIFT, from: "      - run: npm ci --ignore-scripts\n", nth: 2, to: "      - run: npm ci --ignore-scripts && npm rebuild\n", expect: /job drift-prod: \[install\] `npm rebuild`/ },
    { cls: "install", what: "npx of a package in the prod preview", file: PROD, from: "      - run: npm ci --ignore-scripts\n", to: "      - run: npm ci --ignore-scripts\n      - run: npx --yes lockfile-lint --path package-lock.json\n", expect: /job preview-prod: \[install\] `npx --yes lockfile-lint/ },
    { cls: "install", what: "npm install in the dev preview", file: PR, from: "      - run: npm ci --ignore-scripts\n      # pulumi/actions v7.0.0 downloads", to: "      - run: npm i\n      # pulumi/actions v7.0.0 downloads", expect: /job preview-dev: \[install\] `npm i`/ },
    // [fail-open]
    { cls: "fail-open", what: "the head-of-main check passing when the API call fails", file: DEPLOY, from: 'head=$(gh api "repos/$REPO/commits/main" --jq .sha)', nth: 2, to: 'head=$(gh api "repos/$REPO/commits/main" --jq .sha || echo "$SHA")', expect: /job up-prod: \[fail-open\] the head-of-main check passes when the API call fails/ },
    { cls: "fail-open", what: "the head-of-main check skipped when the API answers nothing", file: DEPLOY, from: 'head=$(gh api "repos/$REPO/commits/main" --jq .sha)\n          if [ "$head" != "$SHA" ]; then', nth: 1, to: 'head=$(gh api "repos/$REPO/commits/main" --jq .sha 2>/dev/null || true)\n          if [ -n "$head" ] && [ "$head" != "$SHA" ]; then', expect: /job up-dev: \[fail-open\] the head-of-main check passes when the API (call fails|answers nothing)/ },
    { cls: "fail-open", what: "continue-on-error on the head-of-main check", file: DEPLOY, from: "      - name: still the head of main\n", nth: 2, to: "      - name: still the head of main\n        continue-on-error: true\n", expect: /job up-prod: \[fail-open\] the head-of-main check has continue-on-error/ },
    // [concurrency]
    { cls: "concurrency", what: "the pull-request group named by the head branch", file: PR, from: "group: pull-request-${{ github.event.pull_request.number }}", to: "group: pull-request-${{ github.head_ref }}", expect: /\[concurrency\] the concurrency group pull-request-\$\{\{ github\.head_ref \}\} uses github\.head_ref/ },
    { cls: "concurrency", what: "the e2e group named by the head branch (a fork can cancel main's run)", file: "e2e.yml", from: "group: e2e-${{ github.event.pull_request.number || github.ref }}", to: "group: e2e-${{ github.event.pull_request.head.ref || github.ref_name }}", expect: /e2e\.yml: \[concurrency\]/ },
    { cls: "concurrency", what: "the prod preview group named by the branch", file: PROD, from: "group: preview-prod-pr-${{ needs.pull-request.outputs.number }}", to: "group: preview-prod-pr-${{ github.event.workflow_run.head_branch }}", expect: /preview-prod\.yml: \[concurrency\] .*workflow_run\.head_branch/ },
    // [checksum]
    { cls: "checksum", what: "a manifest piped from curl into kubectl", file: "e2e.yml", from: "        run: .github/scripts/e2e-manifests.sh ingress", to: "        env:\n          MANIFEST: ${{ vars.INGRESS_MANIFEST }}\n        run: curl -fsSL \"$MANIFEST\" | kubectl apply -f -", expect: /e2e\.yml job e2e: \[checksum\] step \d+ downloads a file and uses it without checking a sha256: curl -fsSL "\$MANIFEST" \| kubectl apply -f -/ },
    { cls: "checksum", what: "a release asset downloaded and unpacked", file: "e2e.yml", from: "      - name: local file backend and a generated passphrase\n", to: "      - run: gh release download v1.0.0 -R acme/tools -p tools.tgz && tar xzf tools.tgz\n      - name: local file backend and a generated passphrase\n", expect: /\[checksum\] step \d+ downloads a file and uses it without checking a sha256: gh release download/ },
    { cls: "checksum", what: "the script's sha256 comparison made a no-op", file: "e2e-manifests.sh", from: "  if ! printf '%s  %s\\n' \"$sum\" \"$out\" | sha256sum -c --status; then", to: "  if false; then", expect: /e2e-manifests\.sh: \[checksum\] verified hands on a download whose sha256 does not match/ },
    { cls: "checksum", what: "the Pulumi CLI step's sha256 comparison made a no-op (prod deployment)", file: DEPLOY, nth: 2, from: "if ! (cd \"$work\" && printf '%s  %s\\n' \"$sum\" \"$tarball\" | sha256sum -c --status); then", to: "if false; then", expect: /job up-prod: \[checksum\] step \d+: pulumi\/actions downloads the Pulumi CLI without a checksum: no earlier step installs the CLI checked/ },
    { cls: "checksum", what: "the Pulumi CLI installed before its sha256 is compared (e2e)", file: "e2e.yml", from: /(          if ! \(cd "\$work" && printf[^\n]*\n)(          tar -xzf "\$work\/\$tarball" -C "\$work"\n          sudo install[^\n]*\n)/, to: "$2$1", expect: /e2e\.yml job e2e: \[checksum\] step \d+: pulumi\/actions downloads the Pulumi CLI without a checksum: no earlier step/ },
    { cls: "checksum", what: "the Pulumi CLI step accepting a version pulumi/actions downloads over (3.120.0)", file: "pull-request.yml", from: "3.67.1|3.120.0)", to: "3.67.1)", expect: /pull-request\.yml job preview-dev: \[checksum\] step \d+: pulumi\/actions downloads the Pulumi CLI without a checksum: no earlier step/ },
    { cls: "checksum", what: "the Pulumi CLI step not checking that pulumi on PATH is the binary it checked", file: DEPLOY, nth: 1, from: /          if \[ "\$\(command -v pulumi\)" != "\$BIN\/pulumi" \]; then[^\n]*\n/, to: "", expect: /job up-dev: \[checksum\] step \d+: pulumi\/actions downloads the Pulumi CLI without a checksum: no earlier step/ },
    { cls: "checksum", what: "the Pulumi CLI step taking a sha256 of any file of the checksums file", file: "drift.yml", nth: 1, from: "'$2 == f && length($1) == 64", to: "'length($1) == 64", expect: /job drift-dev: \[checksum\] step \d+: pulumi\/actions downloads the Pulumi CLI without a checksum: no earlier step/ },
    { cls: "checksum", what: "the Pulumi CLI step removed (pulumi/actions downloads its own, unchecked)", file: "drift.yml", nth: 2, from: /      # pulumi\/actions v7\.0\.0 downloads[\s\S]*?>> "\$GITHUB_STEP_SUMMARY"\n/, to: "", expect: /job drift-prod: \[checksum\] step \d+: pulumi\/actions downloads the Pulumi CLI without a checksum: no earlier step/ },
    { cls: "checksum", what: "pulumi/actions asked for another version than the checked one", file: "preview-prod.yml", from: "          pulumi-version-file: .pulumi.version\n", to: "          pulumi-version: latest\n", expect: /job preview-prod: \[checksum\] step \d+: pulumi\/actions downloads the Pulumi CLI without a checksum: it is not given pulumi-version-file/ },
    { cls: "checksum", what: "the script going on after a checksum mismatch", file: "e2e-manifests.sh", from: ": not applied\" >&2\n    return 1\n", to: ": not applied\" >&2\n", expect: /e2e-manifests\.sh: \[checksum\] verified hands on a download/ },
    { cls: "checksum", what: "a second download in the script, outside verified", file: "e2e-manifests.sh", from: "  kubectl apply -f \"$f\"\n", to: "  kubectl apply -f \"$f\"\n  curl -fsSL \"$RAW_BASE/kubernetes/ingress-nginx/main/deploy/static/provider/kind/patch.yaml\" | kubectl apply -f -\n", expect: /e2e-manifests\.sh: \[checksum\] curl outside the verified download/ },
    // Issue 44. Finding 1: the approval binds to the pull request's current head.
    { cls: "approval", what: "the pull-request check no longer comparing the head (a re-run of a stale run is confirmed)", file: PROD, from: ' && [ "$head" = "$SHA" ] && [ "$repo" = "$REPO" ]; then', to: ' && [ "$repo" = "$REPO" ]; then', expect: /job preview-prod: \[approval\] the pull-request check confirms a stale run/ },
    { cls: "approval", what: "the pull-request check accepting a closed pull request", file: PROD, from: '          if [ "$state" = open ] && [ "$base" = main ]', to: '          if [ "$base" = main ]', expect: /\[approval\] the pull-request check confirms the head of a closed pull request/ },
    { cls: "approval", what: "the pull-request check taking the first pull request GitHub matched (pull_requests[0])", file: PROD, from: "          for n in $NUMBERS; do\n", to: "          for n in ${NUMBERS%% *}; do\n", expect: /\[approval\] the pull-request check does not take the pull request whose head the commit is/ },
    { cls: "approval", what: "no confirmation before the prompt (the approval job no longer needs pull-request)", file: PROD, from: "    needs: pull-request\n", to: "", and: { from: "          PR: ${{ needs.pull-request.outputs.number }}\n", to: "          PR: ${{ github.event.workflow_run.pull_requests[0].number }}\n" }, expect: /job preview-prod: \[approval\] nothing before the approval prompt confirms/ },
    { cls: "approval", what: "the check after the approval no longer comparing the head (a force-push while the approval waited)", file: PROD, from: ' || [ "$head" != "$SHA" ] || [ "$repo" != "$REPO" ]; then', to: ' || [ "$repo" != "$REPO" ]; then', expect: /\[approval\] the approval check lets a commit run that is no longer the pull request's head/ },
    { cls: "approval", what: "the approval query reduced to the first approval", file: PROD, from: "--jq '[.[] | select(.state == \"approved\")", to: "--jq '[.[0] | select(.state == \"approved\")", expect: /job preview-prod: \[approval\] the approval check lets the pull request's author approve/ },
    { cls: "concurrency", what: "the workflow-level per-pull-request group back (a skipped or stale run cancels the pending approval)", file: PROD, from: "permissions: {}\n\n# No workflow-level", to: "permissions: {}\n\nconcurrency:\n  group: preview-prod-${{ github.event.workflow_run.pull_requests[0].number || github.event.workflow_run.id }}\n  cancel-in-progress: true\n\n# No workflow-level", expect: /preview-prod\.yml: \[concurrency\] a workflow-level concurrency group .* taken when the run is created/ },
    // Finding 2: preview-prod's secret only on main's ref.
    { cls: "environment", what: "preview-prod's deployment branches back to any branch", file: "settings", settings: (e) => { e["preview-prod"].branches = "any"; }, expect: /\[environment\] preview-prod allows any branch.* the secret KUBECONFIG/ },
    // Finding 3: provider plugins from checked sources only.
    { cls: "plugins", what: "pulumi up of prod allowed to download plugins itself", file: DEPLOY, from: '          PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: "true" # the plugins are the checked ones installed above\n', nth: 2, to: "", expect: /job up-prod: \[plugins\] step \d+ \(pulumi up\) downloads any provider plugin it lacks/ },
    { cls: "plugins", what: "the plugins step removed from the prod drift job", file: DRIFT, from: "      - name: provider plugins, from checked sources\n        run: npm run -s provider-plugins\n", nth: 2, to: "", expect: /job drift-prod: \[plugins\] step \d+ \(pulumi preview\): no earlier step installs the provider plugins/ },
    { cls: "plugins", what: "the e2e's pulumi up allowed to download plugins itself", file: "e2e.yml", from: "    env:\n      PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: \"true\" # the plugins are the checked ones the plugins step installs\n", to: "", expect: /e2e\.yml job e2e: \[plugins\] step \d+ \(pulumi up\) downloads any provider plugin/ },
    // Low items.
    { cls: "trigger", what: "the prod preview after any workflow named \"pull request\"", file: PROD, from: "github.event.workflow.path == '.github/workflows/pull-request.yml' && ", to: "", expect: /job preview-prod: \[trigger\] runs after any workflow named/ },
    { cls: "cache", what: "cache: npm back in the pull request's test job (main's scope is written by the approved preview)", file: PR, from: "          package-manager-cache: false # no cache: an approved prod preview runs in main's cache scope\n", nth: 1, to: "          cache: npm\n", expect: /job test: \[cache\] step 2 restores the npm cache .* in main's cache scope can write/ },
    { cls: "oidc", what: "production's Pulumi OIDC policy matching its subject only", file: "settings", settings: (e) => { delete e.production.workflowRef; }, expect: /\[oidc\] the Pulumi OIDC policy of production matches its subject only/ },
    // What the model did not see (issue 44).
    { cls: "action", what: "a third-party action in the prod deployment (its pin in the table or not)", file: DEPLOY, from: "      - name: short-lived Pulumi token of the prod deploy team (OpenID Connect)\n", to: "      - uses: some-org/changed-files@0123456789abcdef0123456789abcdef01234567 # v1.0.0 (a made-up pin: the model must not need the pin to be wrong)\n      - name: short-lived Pulumi token of the prod deploy team (OpenID Connect)\n", expect: /job up-prod: \[action\] step \d+ runs some-org\/changed-files/ },
    { cls: "checkout-ref", what: "a run step checking out the pull request's branch after the checked commit", file: PROD, from: "      - uses: actions/setup-node@820762786026740c76f36085b0efc47a31fe5020 # v7.0.0\n", to: "      - run: git fetch origin \"refs/heads/$BRANCH\" && git checkout FETCH_HEAD\n        env:\n          BRANCH: ${{ github.event.workflow_run.head_branch }}\n      - uses: actions/setup-node@820762786026740c76f36085b0efc47a31fe5020 # v7.0.0\n", expect: /job preview-prod: \[checkout-ref\] step \d+ changes the checked-out code after the checkout \(`git checkout FETCH_HEAD`\)/ },
    { cls: "log", what: "log-verbosity and log-flow raised on prod's pulumi up", file: DEPLOY, from: "          message: ${{ github.sha }}\n", nth: 2, to: "          message: ${{ github.sha }}\n          log-verbosity: 9\n          log-flow: true\n", expect: /job up-prod: \[log\] step \d+ raises pulumi's logging \(log-verbosity: 9, log-flow: true\)/ },
    { cls: "log", what: "TF_LOG on the prod drift preview", file: DRIFT, from: '          PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: "true" # the plugins are the checked ones installed above\n', nth: 2, to: '          PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: "true" # the plugins are the checked ones installed above\n          TF_LOG: DEBUG\n', expect: /job drift-prod: \[log\] step \d+ raises pulumi's logging \(TF_LOG=DEBUG\)/ },
    { cls: "fetch", what: "kubectl apply -f of a file under a base URL from a variable", file: "e2e.yml", from: "        run: .github/scripts/e2e-manifests.sh ingress", to: "        env:\n          BASE: ${{ vars.INGRESS_BASE }}\n        run: kubectl apply -f \"$BASE/deploy/static/provider/kind/deploy.yaml\"", expect: /e2e\.yml job e2e: \[fetch\] step \d+ fetches `kubectl apply -f \$BASE\/deploy\/static\/provider\/kind\/deploy\.yaml`/ },
    { cls: "fetch", what: "kubectl apply -k of a remote kustomization", file: "e2e.yml", from: "        run: .github/scripts/e2e-manifests.sh ingress", to: "        run: kubectl apply -k github.com/kubernetes/ingress-nginx/deploy/static/provider/kind?ref=controller-v1.12.1", expect: /e2e\.yml job e2e: \[fetch\] step \d+ fetches `kubectl apply -k github\.com/ },
    { cls: "fetch", what: "the script applying a file it did not verify", file: "e2e-manifests.sh", from: '  kubectl apply -f "$f"\n', to: '  kubectl apply -f "$RAW_BASE/kubernetes/ingress-nginx/$INGRESS_NGINX/deploy/static/provider/kind/deploy.yaml"\n', expect: /e2e-manifests\.sh: \[fetch\] fetches `kubectl apply -f \$RAW_BASE/ },
    { cls: "approval", what: "the run name built from the pull request's title", file: PROD, from: "run-name: prod preview of ${{ github.event.workflow_run.head_sha }}\n", to: "run-name: prod preview of ${{ github.event.workflow_run.display_title }}\n", expect: /preview-prod\.yml: \[approval\] the run-name shows github\.event\.workflow_run\.display_title/ },
    { cls: "permissions", what: "the e2e workflow without its empty default permissions", file: "e2e.yml", from: "permissions: {}\n\nconcurrency:", to: "concurrency:", expect: /e2e\.yml: \[permissions\] the workflow default permissions must be \{\}/ },

];

function apply(text: string, m: Mutation): string {
    if (m.from === undefined || m.to === undefined) throw new Error(`${m.what}: no from/to`);
    const re = typeof m.from === "string" ? new RegExp(m.from.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"), "g") : new RegExp(m.from.source, "g");
    const hits = [...text.matchAll(re)];
    if (m.nth === undefined) assert.equal(hits.length, 1, `${m.what}: the text to change is not exactly once in ${m.file} (${hits.length} times)`);
    const hit = hits[(m.nth ?? 1) - 1];
    assert.ok(hit, `${m.what}: occurrence ${m.nth} not in ${m.file}`);
    if (typeof m.from === "string") return text.slice(0, hit.index) + m.to + text.slice(hit.index! + hit[0].length);
    if (m.to === undefined) throw new Error("unreachable");
    // The first match from this occurrence on is this occurrence (a lookahead may need the text after it).
    return text.slice(0, hit.index) + text.slice(hit.index).replace(new RegExp(m.from.source), m.to);
}

function applyAll(text: string, m: Mutation): string {
    const once = apply(text, m);
    return m.and ? apply(once, { ...m, ...m.and, and: undefined }) : once;
}

/** A finding's place and class: "<file>[ job <name>]: [<class>] <text>". */
export function findingParts(f: string): { at: string; cls: string; text: string } | undefined {
    const m = /^(\S+(?: job [\w-]+)?): \[([\w-]+)\] ([\s\S]*)$/.exec(f);
    return m ? { at: m[1], cls: m[2], text: m[3] } : undefined;
}

/** Whether a mutation is caught for its own reason: a finding of its class, at its place, matching its text. */
export function caughtFor(m: Mutation, found: string[]): boolean {
    return found.some((f) => {
        const p = findingParts(f);
        return !!p && p.cls === m.cls && (p.at === (m.at ?? m.file) || p.at.startsWith(`${m.at ?? m.file} job `)) && m.expect.test(f);
    });
}

function mutated(m: Mutation): { workflows: Workflows; scripts: Workflows; envs: Environments } {
    const workflows = { ...WORKFLOWS };
    const scripts = { ...SCRIPTS };
    const envs: Environments = JSON.parse(JSON.stringify(ENVIRONMENTS));
    if (m.file === "settings") {
        assert.ok(m.settings, `${m.what}: a settings mutation needs settings`);
        m.settings(envs);
    } else {
        const target = m.file in workflows ? workflows : scripts;
        assert.ok(m.file in target, `${m.file} is not a workflow or script`);
        target[m.file] = applyAll(target[m.file], m);
    }
    return { workflows, scripts, envs };
}

/** Edits that change nothing a workflow does: each must report nothing. */
function neutralEdits(): Array<{ what: string; file: string; text: string }> {
    const out: Array<{ what: string; file: string; text: string }> = [];
    for (const [file, text] of Object.entries(WORKFLOWS)) {
        // A harmless step before every step of every job (each later step's number moves, by one
        // more each time), and one before the first step only (the others move by one).
        const harmless = '      - name: a harmless step\n        run: echo "nothing to see"\n';
        out.push({ what: "a harmless step before every step", file, text: text.replace(/^(?=      - )/gm, harmless) });
        const first = text.search(/^      - /m);
        out.push({ what: "a harmless step before the first step", file, text: `${text.slice(0, first)}${harmless}${text.slice(first)}` });
        // Each job's steps after its first one, one job at a time: a step inserted before the second step.
        for (const m of text.matchAll(/^    steps:\n      - [\s\S]*?\n(?=      - )/gm)) {
            const at = m.index! + m[0].length;
            out.push({ what: `a harmless step before the second step of the job at offset ${m.index}`, file, text: `${text.slice(0, at)}${harmless}${text.slice(at)}` });
        }
        // Every step renamed, and a comment before every job.
        out.push({ what: "every step renamed", file, text: text.replace(/^(      - name: )(.*)$/gm, "$1renamed $2").replace(/^(  )([\w-]+):\n(?=    )/gm, "$1# a comment\n$1$2:\n") });
    }
    return out;
}

describe("the workflow security model, by mutation", () => {
    it("finds nothing in the real workflows and scripts", async () => {
        assert.deepEqual(await securityViolations(WORKFLOWS, SCRIPTS), []);
    });

    it("finds nothing after edits that change no behaviour (no catch from moved text or step numbers)", async () => {
        const edits = neutralEdits();
        assert.ok(edits.length >= 20, `only ${edits.length} neutral edits`);
        for (const e of edits) {
            const found = await securityViolations({ ...WORKFLOWS, [e.file]: e.text }, SCRIPTS);
            assert.deepEqual(found, [], `${e.file}: ${e.what} is reported`);
        }
    });

    it("names each mutation's class, and every class has a mutation", () => {
        for (const m of MUTATIONS) assert.ok((FINDING_CLASSES as readonly string[]).includes(m.cls), `${m.what}: class ${m.cls}`);
        const covered = new Set(MUTATIONS.map((m) => m.cls));
        // (A pin's commit is checked against the action's repository, not by this model:
        // test/workflows.test.ts with OPS_PIN_MIRRORS.)
        assert.deepEqual(FINDING_CLASSES.filter((c) => !covered.has(c)), []);
    });

    for (const m of MUTATIONS) {
        it(`catches [${m.cls}]: ${m.what}`, async () => {
            const { workflows, scripts, envs } = mutated(m);
            const found = await securityViolations(workflows, scripts, envs);
            assert.ok(found.length > 0, `${m.what}: not caught`);
            for (const f of found) assert.ok((FINDING_CLASSES as readonly string[]).includes(findingParts(f)?.cls ?? ""), `${m.what}: a finding without a known class: ${f}`);
            assert.ok(caughtFor(m, found), `${m.what}: not caught for its own reason ([${m.cls}] at ${m.at ?? m.file} matching ${m.expect}); found:\n${found.join("\n")}`);
        });
    }
});
