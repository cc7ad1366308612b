// Placeholder replaced by the provisioning helper: checks services only.
export default async function setup(): Promise<void> {}
