// kafkajs's admin client against a KairoLog cluster: the topic and group
// administration a kafkajs application or tool does besides producing and
// consuming. Create a topic, raise its partitions and read its metadata;
// write three records and find offsets by timestamp; set, read and reset
// a group's offsets with no member, and delete the group; delete the
// topic. Prints one
// JSON object on stdout for TestKafkaJSAdmin.
//
// Environment: BROKERS (comma-separated host:port), TOPIC, GROUP.
'use strict'

const { Kafka, logLevel } = require('kafkajs')

const kafka = new Kafka({
  clientId: 'kairolog-kafkajs-admin',
  brokers: process.env.BROKERS.split(','),
  logLevel: logLevel.INFO,
  logCreator: () => ({ namespace, level, log }) => {
    process.stderr.write(JSON.stringify({ level, namespace, ...log }) + '\n')
  },
  retry: { retries: 10 }
})
const topic = process.env.TOPIC
const groupId = process.env.GROUP

const offsetsOf = async () => (await admin.fetchOffsets({ groupId, topics: [topic] }))[0].partitions
  .map(p => ({ partition: p.partition, offset: p.offset }))
  .sort((a, b) => a.partition - b.partition)

const admin = kafka.admin()

async function main () {
  const out = {}
  await admin.connect()
  await admin.createTopics({ waitForLeaders: true, topics: [{ topic, numPartitions: 2, replicationFactor: 3 }] })
  await admin.createPartitions({ topicPartitions: [{ topic, count: 4 }] })
  const meta = await admin.fetchTopicMetadata({ topics: [topic] })
  out.partitions = meta.topics[0].partitions.length

  const producer = kafka.producer()
  await producer.connect()
  const base = Date.now() - 60000
  await producer.send({
    topic,
    acks: -1,
    messages: [0, 1, 2].map(i => ({ partition: 0, value: `v${i}`, timestamp: String(base + i * 10000) }))
  })
  await producer.disconnect()
  // The first record at or after base+5s is the second one, at offset 1.
  out.byTimestamp = (await admin.fetchTopicOffsetsByTimestamp(topic, base + 5000))
    .filter(p => p.partition === 0).map(p => p.offset)

  await admin.setOffsets({ groupId, topic, partitions: [{ partition: 0, offset: '2' }, { partition: 1, offset: '0' }] })
  out.set = await offsetsOf()
  await admin.resetOffsets({ groupId, topic, earliest: true })
  out.reset = await offsetsOf()
  // A group left with no member and no offset is forgotten at once; give
  // it an offset again to delete it.
  await admin.setOffsets({ groupId, topic, partitions: [{ partition: 3, offset: '1' }] })
  await admin.deleteGroups([groupId])
  out.groupsAfterDelete = (await admin.listGroups()).groups.map(g => g.groupId).filter(g => g === groupId)

  await admin.deleteTopics({ topics: [topic] })
  out.topicsAfterDelete = (await admin.listTopics()).filter(t => t === topic)
  await admin.disconnect()
  process.stdout.write(JSON.stringify(out) + '\n')
}

main().catch(err => {
  process.stderr.write(`kafkajs: ${err.stack || err}\n`)
  process.exit(1)
})
