// Preloaded with `node --require` into a program that binds 0.0.0.0 by itself (opencode-bridge's
// server.listen(BRIDGE_PORT, "0.0.0.0")): every listen on a port goes to 127.0.0.1 instead, so a
// product test never listens on another address.
const net = require("node:net");

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
    const first = args[0];
    if (typeof first === "number" || (typeof first === "string" && /^\d+$/.test(first))) {
        if (typeof args[1] === "string") args[1] = "127.0.0.1";
        else args.splice(1, 0, "127.0.0.1");
    } else if (first && typeof first === "object" && "port" in first) {
        args[0] = { ...first, host: "127.0.0.1" };
    }
    return listen.apply(this, args);
};
