export default function Page() { return <main>web</main> }
