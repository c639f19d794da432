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
    { what: "a long-lived token as secrets['…']", file: PROD, from: "        env:\n          KUBECONFIG: ${{ runner.temp }}/kubeconfig", to: "        env:\n          PULUMI_ACCESS_TOKEN: ${{ secrets['PULUMI_ACCESS_TOKEN'] }}\n          KUBECONFIG: ${{ runner.temp }}/kubeconfig", expect: /PULUMI_ACCESS_TOKEN/ },
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
    { what: "the preview's job token given write access to pull requests for a comment", file: PROD, from: "      pull-requests: read # the pull request's author", to: "      pull-requests: write # the pull request's author, and a comment", expect: /write-scoped GITHUB_TOKEN/ },
    { what: "the kubeconfig in job-level env of the render job", file: DEPLOY, from: "    name: offline render (no credential)\n", to: "    name: offline render (no credential)\n    env:\n      KUBECONFIG_CONTENT: ${{ secrets.KUBECONFIG }}\n", expect: /job env|job-level env/ },

    // Issue 31: data crossing from untrusted code to a credential, refs, failures. Each is caught
    // for its class (the finding starts with it), not for another reason.
    // [artifact]
    { what: "the images-lock artifact downloaded into the workspace", file: PROD, from: "          path: ${{ runner.temp }}/images-lock\n", to: "          path: .\n", expect: /\[artifact\] step \d+ downloads images-lock \(written by another run .*\) into the workspace/ },
    { what: "the images-lock artifact copied in without its check", file: PROD, from: '        run: npm run -s images:artifact -- "$RUNNER_TEMP/images-lock" images.lock.json\n', to: '        run: cp "$RUNNER_TEMP/images-lock/images.lock.json" images.lock.json\n', expect: /\[artifact\] images-lock .* without its check/ },
    { what: "every artifact of the pull request's run downloaded", file: PROD, from: "          name: images-lock\n          path: ${{ runner.temp }}/images-lock\n", to: "          path: ${{ runner.temp }}/images-lock\n", expect: /\[artifact\] step \d+ downloads every artifact/ },
    { what: "the diff job's lock applied in the dev preview's workspace", file: PR, from: "      - run: npm ci --ignore-scripts\n      - name: read-only kubeconfig", to: "      - run: npm ci --ignore-scripts\n      - uses: actions/download-artifact@3e5f45b2cfb9172054b4087a40e8e0b5a5461e7c # v8.0.1\n        with:\n          name: images-lock\n          path: .\n      - name: read-only kubeconfig", expect: /job preview-dev: \[artifact\] step \d+ downloads images-lock \(written by job diff after .*\) into the workspace/ },
    { what: "the comment job posting the pull request's raw report", file: PR, from: "          name: comment-body\n          path: ${{ runner.temp }}/comment-body\n", to: "          name: offline-diff\n          path: ${{ runner.temp }}/comment-body\n", expect: /\[artifact\] offline-diff \(written by job diff after .*\) is used by step 2 without its check/ },
    // [cache]
    { what: "setup-node's automatic cache back on in the prod deployment", file: DEPLOY, from: "          package-manager-cache: false # no cache another job's install scripts could have written\n", nth: 2, to: "", expect: /\[cache\] step 2 restores the npm cache \(setup-node turns caching on by itself/ },
    { what: "cache: npm in the dev preview", file: PR, from: "          package-manager-cache: false # no cache another job's install scripts could have written\n      # The lock file's packages", to: "          cache: npm\n      # The lock file's packages", expect: /job preview-dev: \[cache\] step 2 restores the npm cache \(setup-node cache: npm\), which untrusted code can write \(.*pull-request\.yml job test/ },
    { what: "actions/cache in the prod drift job", file: DRIFT, from: "      - run: npm ci --ignore-scripts\n", nth: 2, to: "      - uses: actions/cache@0400d5f644dc74513175e3cd8d07132dd4860809 # v4.2.4\n        with:\n          path: node_modules\n          key: modules-${{ hashFiles('package-lock.json') }}\n      - run: npm ci --ignore-scripts\n", expect: /job drift-prod: \[cache\] step \d+ restores the cache modules-/ },
    // [env-file]
    { what: "node_modules/.bin put on $GITHUB_PATH before the prod deployment", file: DEPLOY, from: "      - name: the resolved digests are the committed ones\n", to: "      - run: echo \"$GITHUB_WORKSPACE/node_modules/.bin\" >> \"$GITHUB_PATH\"\n      - name: the resolved digests are the committed ones\n", expect: /job up-prod: \[env-file\] step \d+ adds to \$GITHUB_PATH/ },
    { what: "NODE_OPTIONS from the downloaded artifact into $GITHUB_ENV", file: PROD, from: "      - name: read-only kubeconfig\n", to: "      - run: echo \"NODE_OPTIONS=--require $RUNNER_TEMP/images-lock/hook.js\" >> \"$GITHUB_ENV\"\n      - name: read-only kubeconfig\n", expect: /\[env-file\] step \d+ writes \$GITHUB_ENV from something other than a constant path/ },
    { what: "a $GITHUB_ENV value read from a workspace file in drift", file: DRIFT, from: '          echo "KUBECONFIG=$RUNNER_TEMP/kubeconfig" >> "$GITHUB_ENV"\n', nth: 2, to: '          echo "KUBECONFIG=$RUNNER_TEMP/kubeconfig" >> "$GITHUB_ENV"\n          echo "PULUMI_HOME=$(cat .pulumi-home)" >> "$GITHUB_ENV"\n', expect: /job drift-prod: \[env-file\] .*PULUMI_HOME/ },
    // [job-output]
    { what: "the dev preview gated on an output of the diff job", file: PR, from: "    timeout-minutes: 30\n    environment: preview-dev\n", to: "    timeout-minutes: 30\n    needs: diff\n    environment: preview-dev\n", and: { from: "github.event.pull_request.head.repo.full_name == github.repository && github.event.pull_request.user.type == 'User' && !endsWith(github.actor, '[bot]')\n    runs-on: ubuntu-24.04\n    timeout-minutes: 30", to: "github.event.pull_request.head.repo.full_name == github.repository && github.event.pull_request.user.type == 'User' && !endsWith(github.actor, '[bot]') && needs.diff.outputs.report == 'ready'\n    runs-on: ubuntu-24.04\n    timeout-minutes: 30" }, expect: /job preview-dev: \[job-output\] needs\.diff\.outputs is written by job diff/ },
    { what: "the comment job deciding on the diff job's output", file: PR, from: "    needs: comment-body\n", to: "    needs: [diff, comment-body]\n", and: { from: "needs.comment-body.result == 'success'", to: "needs.diff.outputs.report == 'ready'" }, expect: /job comment: \[job-output\] needs\.diff\.outputs/ },
    // [checkout-ref]
    { what: "the prod preview checking out the pull request's branch name", file: PROD, from: "          ref: ${{ github.event.workflow_run.head_sha }}\n", to: "          ref: ${{ github.event.workflow_run.head_branch }}\n", expect: /\[checkout-ref\] step \d+ checks out \$\{\{ github\.event\.workflow_run\.head_branch \}\}/ },
    { what: "the prod deployment checking out main by name", file: DEPLOY, from: "          persist-credentials: false\n", nth: 3, to: "          ref: main\n          persist-credentials: false\n", expect: /job up-prod: \[checkout-ref\] step 1 checks out main/ },
    // [dispatch-input]
    { what: "a dispatch input naming the commit prod deploys", file: DEPLOY, from: "  workflow_dispatch: {}\n", to: "  workflow_dispatch:\n    inputs:\n      ref:\n        type: string\n", and: { from: "          persist-credentials: false\n", nth: 3, to: "          ref: ${{ inputs.ref }}\n          persist-credentials: false\n" }, expect: /job up-prod: \[dispatch-input\] step 1 checks out \$\{\{ inputs\.ref \}\}/ },
    { what: "a dispatch input choosing the stack dev deploys", file: DEPLOY, from: "stack-name: ${{ format('{0}/dev', vars.PULUMI_ORG) }}", to: "stack-name: ${{ format('{0}/{1}', vars.PULUMI_ORG, inputs.stack) }}", expect: /job up-dev: \[dispatch-input\] .*inputs\.stack/ },
    { what: "a dispatch input letting drift run off main", file: DRIFT, from: "    if: github.ref == 'refs/heads/main'\n", nth: 1, to: "    if: github.ref == 'refs/heads/main' || github.event.inputs.force == 'true'\n", expect: /job drift-dev: \[dispatch-input\] github\.ref == 'refs\/heads\/main' \|\| github\.event\.inputs\.force/ },
    // [approval]
    { what: "the prod preview's name no longer showing the commit", file: PROD, from: "    name: pulumi preview (prod) of ${{ github.event.workflow_run.head_sha }}, after a reviewer's approval\n", to: "    name: pulumi preview (prod), after a reviewer's approval\n", expect: /\[approval\] the job's name does not show the commit/ },
    { what: "the prod preview back in the pull request's own workflow", file: PR, from: /\n  # Stack Read on dev: the dev preview[\s\S]*$/, to: "$&\n  preview-prod:\n    name: pulumi preview (prod)\n    if: vars.PULUMI_ORG != '' && github.event.pull_request.head.repo.full_name == github.repository && github.event.pull_request.user.type == 'User' && !endsWith(github.actor, '[bot]')\n    runs-on: ubuntu-24.04\n    timeout-minutes: 30\n    environment: preview-prod\n    permissions:\n      contents: read\n      id-token: write\n    steps:\n      - uses: actions/checkout@3d3c42e5aac5ba805825da76410c181273ba90b1 # v7.0.1\n        with:\n          persist-credentials: false\n      - uses: pulumi/auth-actions@141415910c3beb54e03b48e9057c204c97b956f2 # v2.1.0\n        with:\n          organization: ${{ vars.PULUMI_ORG }}\n          requested-token-type: urn:pulumi:token-type:access_token:team\n          scope: team:${{ vars.PULUMI_TEAM }}\n          token-expiration: 1800\n      - uses: pulumi/actions@8e5e406f4007fca908480587cb9893c07090f58d # v7.0.0\n        with:\n          command: preview\n          stack-name: ${{ format('{0}/prod', vars.PULUMI_ORG) }}\n          github-token: \"\"\n", expect: /job preview-prod: \[approval\] the approved job's definition comes from the pull request's own workflow file/ },
    { what: "the prod preview's commit checked out without a reviewer (preview-dev's environment)", file: PROD, from: "      name: preview-prod\n", to: "      name: preview-dev\n", expect: /\[approval\] step \d+ checks out a pull request's commit .* no reviewer's approval/ },
    { what: "the author's own approval accepted (the check removed)", file: PROD, from: /      - name: the approval is not the pull request author's\n(?:        .*\n|          .*\n)+?(?=      - uses: actions\/checkout)/, to: "", expect: /\[approval\] no check, before the credential, that the approver is not the pull request's author/ },
    { what: "the approval check comparing nothing", file: PROD, from: '            if [ "$approver" = "$author" ]; then', to: '            if [ "$approver" = "nobody" ]; then', expect: /\[approval\] the approval check lets the pull request's author approve/ },
    { what: "the approval check passing when the API fails", file: PROD, from: 'author=$(gh api "repos/$REPO/pulls/$PR" --jq .user.login)', to: 'author=$(gh api "repos/$REPO/pulls/$PR" --jq .user.login || true)', and: { from: '          if [ -z "$author" ] || [ -z "$approvers" ]; then', to: '          if false; then' }, expect: /\[fail-open\] the approval check passes when the API (call fails|names no approver)/ },
    // [status]
    { what: "prod deployed even when its approval failed (!cancelled())", file: DEPLOY, from: "    needs: approve-prod\n    if: github.ref == 'refs/heads/main'\n", to: "    needs: approve-prod\n    if: ${{ !cancelled() && github.ref == 'refs/heads/main' }}\n", expect: /job up-prod: \[status\] runs when a job it needs \(approve-prod, up-dev, main-only, render\) failed or was rejected/ },
    { what: "prod deployed always()", file: DEPLOY, from: "    needs: approve-prod\n    if: github.ref == 'refs/heads/main'\n", to: "    needs: approve-prod\n    if: always() && github.ref == 'refs/heads/main'\n", expect: /job up-prod: \[status\] runs when a job it needs/ },
    { what: "continue-on-error on the approval job", file: DEPLOY, from: "    environment: production-approval\n", to: "    environment: production-approval\n    continue-on-error: true\n", expect: /job up-prod: \[status\] needs approve-prod, whose continue-on-error/ },
    { what: "the comment posted whatever the body job did", file: PR, from: "needs.comment-body.result == 'success'", to: "needs.comment-body.result != 'cancelled'", expect: /job comment: \[status\] runs when a job it needs \(comment-body, diff\) failed/ },
    { what: "continue-on-error on the render the deployment needs", file: DEPLOY, from: "      - name: offline render of dev and prod (fails fast on a broken stack)\n", to: "      - name: offline render of dev and prod (fails fast on a broken stack)\n        continue-on-error: true\n", expect: /job render: \[status\] step \d+ has continue-on-error, and job up-dev \(credentialed\) depends on its result/ },
    // [install]
    { what: "npm clean-install in the prod deployment", file: DEPLOY, from: "      - run: npm ci --ignore-scripts\n", nth: 2, to: "      - run: npm clean-install\n", expect: /job up-prod: \[install\] `npm clean-install` \(dependency install scripts\)/ },
    { what: "npm ic in the dev deployment", file: DEPLOY, from: "      - run: npm ci --ignore-scripts\n", nth: 1, to: "      - run: npm ic --ignore-scripts=false\n", expect: /job up-dev: \[install\] `npm ic --ignore-scripts=false`/ },
    { what: "--ignore-scripts undone by --ignore-scripts=false", file: DRIFT, from: "      - run: npm ci --ignore-scripts\n", nth: 1, to: "      - run: npm ci --ignore-scripts --ignore-scripts=false\n", expect: /job drift-dev: \[install\] `npm ci --ignore-scripts --ignore-scripts=false`/ },
    { what: "npm rebuild after the scriptless install", file: DRIFT, from: "      - run: npm ci --ignore-scripts\n", nth: 2, to: "      - run: npm ci --ignore-scripts && npm rebuild\n", expect: /job drift-prod: \[install\] `npm rebuild`/ },
    { what: "npx of a package in the prod preview", file: PROD, from: "      - run: npm ci --ignore-scripts\n", to: "      - run: npm ci --ignore-scripts\n      - run: npx --yes lockfile-lint --path package-lock.json\n", expect: /job preview-prod: \[install\] `npx --yes lockfile-lint/ },
    { what: "npm install in the dev preview", file: PR, from: "      - run: npm ci --ignore-scripts\n      - name: read-only kubeconfig", to: "      - run: npm i\n      - name: read-only kubeconfig", expect: /job preview-dev: \[install\] `npm i`/ },
    // [fail-open]
    { what: "the head-of-main check passing when the API call fails", file: DEPLOY, from: 'head=$(gh api "repos/$REPO/commits/main" --jq .sha)', nth: 2, to: 'head=$(gh api "repos/$REPO/commits/main" --jq .sha || echo "$SHA")', expect: /job up-prod: \[fail-open\] the head-of-main check passes when the API call fails/ },
    { what: "the head-of-main check skipped when the API answers nothing", file: DEPLOY, from: 'head=$(gh api "repos/$REPO/commits/main" --jq .sha)\n          if [ "$head" != "$SHA" ]; then', nth: 1, to: 'head=$(gh api "repos/$REPO/commits/main" --jq .sha 2>/dev/null || true)\n          if [ -n "$head" ] && [ "$head" != "$SHA" ]; then', expect: /job up-dev: \[fail-open\] the head-of-main check passes when the API (call fails|answers nothing)/ },
    { what: "continue-on-error on the head-of-main check", file: DEPLOY, from: "      - name: still the head of main\n", nth: 2, to: "      - name: still the head of main\n        continue-on-error: true\n", expect: /job up-prod: \[fail-open\] the head-of-main check has continue-on-error/ },
    // [concurrency]
    { what: "the pull-request group named by the head branch", file: PR, from: "group: pull-request-${{ github.event.pull_request.number }}", to: "group: pull-request-${{ github.head_ref }}", expect: /\[concurrency\] the concurrency group pull-request-\$\{\{ github\.head_ref \}\} uses github\.head_ref/ },
    { what: "the e2e group named by the head branch (a fork can cancel main's run)", file: "e2e.yml", from: "group: e2e-${{ github.event.pull_request.number || github.ref }}", to: "group: e2e-${{ github.event.pull_request.head.ref || github.ref_name }}", expect: /e2e\.yml: \[concurrency\]/ },
    { what: "the prod preview group named by the branch", file: PROD, from: "group: preview-prod-${{ github.event.workflow_run.pull_requests[0].number || github.event.workflow_run.id }}", to: "group: preview-prod-${{ github.event.workflow_run.head_branch }}", expect: /preview-prod\.yml: \[concurrency\] .*workflow_run\.head_branch/ },
    // [checksum]
    { what: "a manifest piped from curl into kubectl", file: "e2e.yml", from: "        run: .github/scripts/e2e-manifests.sh ingress", to: "        env:\n          MANIFEST: ${{ vars.INGRESS_MANIFEST }}\n        run: curl -fsSL \"$MANIFEST\" | kubectl apply -f -", expect: /e2e\.yml job e2e: \[checksum\] step \d+ downloads a file and uses it without checking a sha256: curl -fsSL "\$MANIFEST" \| kubectl apply -f -/ },
    { what: "a release asset downloaded and unpacked", file: "e2e.yml", from: "      - name: local file backend and a generated passphrase\n", to: "      - run: gh release download v1.0.0 -R acme/tools -p tools.tgz && tar xzf tools.tgz\n      - name: local file backend and a generated passphrase\n", expect: /\[checksum\] step \d+ downloads a file and uses it without checking a sha256: gh release download/ },
    { what: "the script's sha256 comparison made a no-op", file: "e2e-manifests.sh", from: "  if ! printf '%s  %s\\n' \"$sum\" \"$out\" | sha256sum -c --status; then", to: "  if false; then", expect: /e2e-manifests\.sh: \[checksum\] verified hands on a download whose sha256 does not match/ },
    { what: "the Pulumi CLI step's sha256 comparison made a no-op (prod deployment)", file: DEPLOY, nth: 2, from: "if ! (cd \"$work\" && printf '%s  %s\\n' \"$sum\" \"$tarball\" | sha256sum -c --status); then", to: "if false; then", expect: /job up-prod: \[checksum\] step \d+: pulumi\/actions downloads the Pulumi CLI without a checksum: no earlier step installs the CLI checked/ },
    { what: "the Pulumi CLI installed before its sha256 is compared (e2e)", file: "e2e.yml", from: /(          if ! \(cd "\$work" && printf[^\n]*\n)(          tar -xzf "\$work\/\$tarball" -C "\$work"\n          sudo install[^\n]*\n)/, to: "$2$1", expect: /e2e\.yml job e2e: \[checksum\] step \d+: pulumi\/actions downloads the Pulumi CLI without a checksum: no earlier step/ },
    { what: "the Pulumi CLI step accepting a version pulumi/actions downloads over (3.120.0)", file: "pull-request.yml", from: "3.67.1|3.120.0)", to: "3.67.1)", expect: /pull-request\.yml job preview-dev: \[checksum\] step \d+: pulumi\/actions downloads the Pulumi CLI without a checksum: no earlier step/ },
    { what: "the Pulumi CLI step not checking that pulumi on PATH is the binary it checked", file: DEPLOY, nth: 1, from: /          if \[ "\$\(command -v pulumi\)" != "\$BIN\/pulumi" \]; then[^\n]*\n/, to: "", expect: /job up-dev: \[checksum\] step \d+: pulumi\/actions downloads the Pulumi CLI without a checksum: no earlier step/ },
    { what: "the Pulumi CLI step taking a sha256 of any file of the checksums file", file: "drift.yml", nth: 1, from: "'$2 == f && length($1) == 64", to: "'length($1) == 64", expect: /job drift-dev: \[checksum\] step \d+: pulumi\/actions downloads the Pulumi CLI without a checksum: no earlier step/ },
    { what: "the Pulumi CLI step removed (pulumi/actions downloads its own, unchecked)", file: "drift.yml", nth: 2, from: /      # pulumi\/actions v7\.0\.0 downloads[\s\S]*?>> "\$GITHUB_STEP_SUMMARY"\n/, to: "", expect: /job drift-prod: \[checksum\] step \d+: pulumi\/actions downloads the Pulumi CLI without a checksum: no earlier step/ },
    { what: "pulumi/actions asked for another version than the checked one", file: "preview-prod.yml", from: "          pulumi-version-file: .pulumi.version\n", to: "          pulumi-version: latest\n", expect: /job preview-prod: \[checksum\] step \d+: pulumi\/actions downloads the Pulumi CLI without a checksum: it is not given pulumi-version-file/ },
    { what: "the script going on after a checksum mismatch", file: "e2e-manifests.sh", from: ": not applied\" >&2\n    return 1\n", to: ": not applied\" >&2\n", expect: /e2e-manifests\.sh: \[checksum\] verified hands on a download/ },
    { what: "a second download in the script, outside verified", file: "e2e-manifests.sh", from: "  kubectl apply -f \"$f\"\n", to: "  kubectl apply -f \"$f\"\n  curl -fsSL \"$RAW_BASE/kubernetes/ingress-nginx/main/deploy/static/provider/kind/patch.yaml\" | kubectl apply -f -\n", expect: /e2e-manifests\.sh: \[checksum\] curl outside the verified download/ },
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
