/** The model bridge's entry point: `node main.js` in its image (bridge/Containerfile). */
import { createBridge } from "./server";
import { readSettings, SettingsError } from "./settings";

function main() {
    let settings;
    try {
        settings = readSettings(process.env);
    } catch (e) {
        if (e instanceof SettingsError) {
            console.error(e.message);
            process.exit(2);
        }
        throw e;
    }
    const bridge = createBridge(settings);
    bridge.server.listen(settings.port, "0.0.0.0", () => {
        console.log(`model bridge listening on 0.0.0.0:${settings.port}, agent server ${settings.agentBase}, model ${settings.defaultModel}`);
    });
    const stop = (signal: string) => {
        console.log(`model bridge: ${signal}, finishing running requests`);
        bridge.shutdown(25_000).then(() => process.exit(0));
    };
    process.once("SIGTERM", () => stop("SIGTERM"));
    process.once("SIGINT", () => stop("SIGINT"));
}

main();
