/** The `data:` events of a server-sent-events response, each with the time it arrived (tests only). */
export async function sseEvents(res: Response): Promise<{ t: number; data: string }[]> {
    const events: { t: number; data: string }[] = [];
    let buf = "";
    for await (const part of res.body as unknown as AsyncIterable<Uint8Array>) {
        buf += Buffer.from(part).toString();
        let i;
        while ((i = buf.indexOf("\n\n")) >= 0) {
            const ev = buf.slice(0, i);
            buf = buf.slice(i + 2);
            if (ev.startsWith("data: ")) events.push({ t: performance.now(), data: ev.slice(6) });
        }
    }
    return events;
}
