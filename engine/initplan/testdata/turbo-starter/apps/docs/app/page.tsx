export default function Page() { return <main>docs</main> }
