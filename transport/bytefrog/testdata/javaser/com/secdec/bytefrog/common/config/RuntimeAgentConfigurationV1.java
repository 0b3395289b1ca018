package com.secdec.bytefrog.common.config;

import java.io.Serializable;
import java.util.List;

/**
 * Field-identical copy of the Bytefrog HQ's agent configuration class: same
 * name, fields and serialVersionUID, so ObjectOutputStream writes the same
 * stream the original HQ writes.
 */
public class RuntimeAgentConfigurationV1 implements Serializable {
	private static final long serialVersionUID = -4660117618158655806L;

	private final byte runId;
	private final int heartbeatInterval;
	private final List<String> exclusions;
	private final List<String> inclusions;
	private final int bufferMemoryBudget;
	private final int queueRetryCount;
	private final int numDataSenders;

	public RuntimeAgentConfigurationV1(byte runId, int heartbeatInterval, List<String> exclusions,
			List<String> inclusions, int bufferMemoryBudget, int queueRetryCount, int numDataSenders) {
		this.runId = runId;
		this.heartbeatInterval = heartbeatInterval;
		this.exclusions = exclusions;
		this.inclusions = inclusions;
		this.bufferMemoryBudget = bufferMemoryBudget;
		this.queueRetryCount = queueRetryCount;
		this.numDataSenders = numDataSenders;
	}
}
