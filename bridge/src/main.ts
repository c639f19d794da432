/**
 * The model bridge's entry point: `node main.js` in its image (bridge/Containerfile). Settings and
 * the client keys file are checked first; a problem stops the start (exit 2) naming the variable
 * or the file and line, never a secret. SIGTERM (a rollout) stops new chats and lets the running
 * ones finish for up to BRIDGE_UPSTREAM_TIMEOUT_MS (the pod's grace period covers it), then aborts
 * the rest in the agent server.
 */
import { KeysFileError } from "./clientKeys";
import { createBridge } from "./server";
import { readSettings, SettingsError } from "./settings";

function main() {
    let settings;
    let bridge;
    try {
        settings = readSettings(process.env);
        bridge = createBridge(settings);
    } catch (e) {
        if (e instanceof SettingsError || e instanceof KeysFileError) {
            console.error(e instanceof KeysFileError ? `model bridge: ${e.message}` : e.message);
            process.exit(2);
        }
        throw e;
    }
    const { port, agentBase, defaultModel, upstreamTimeoutMs } = settings;
    bridge.server.listen(port, "0.0.0.0", () => {
        console.log(`model bridge listening on 0.0.0.0:${port}, agent server ${agentBase}, model ${defaultModel}`);
    });
    let stopping = false;
    const stop = (signal: string) => {
        if (stopping) return;
        stopping = true;
        console.log(`model bridge: ${signal}: no new chats; running ones may finish for ${upstreamTimeoutMs} ms`);
        bridge.shutdown(upstreamTimeoutMs).then(() => {
            console.log("model bridge: stopped");
            process.exit(0);
        });
    };
    process.on("SIGTERM", () => stop("SIGTERM"));
    process.on("SIGINT", () => stop("SIGINT"));
}

main();
